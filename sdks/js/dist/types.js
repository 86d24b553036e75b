// Wire and result types shared by the modules. Field names follow the broker's JSON exactly.
/** The consumer-group name the broker uses for queue mode (competing consumers share one cursor). */
export const QUEUE_MODE = "__QUEUE_MODE__";
