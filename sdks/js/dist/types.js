// Wire and result types shared by the modules. Field names follow the broker's JSON exactly.
/** The consumer-group name the broker uses for queue mode (competing consumers share one cursor). */
export const QUEUE_MODE = "__QUEUE_MODE__";
// The object literal must name every key of QueueOptions and nothing else, so the list below cannot drift
// from the interface.
const optionKeys = {
    leaseTime: true, retryLimit: true, retryDelay: true, maxSize: true, ttl: true, priority: true,
    delayedProcessing: true, windowBuffer: true, retentionSeconds: true, completedRetentionSeconds: true,
    retentionEnabled: true, encryptionEnabled: true, deadLetterQueue: true, dlqAfterMaxRetries: true,
    maxWaitTimeSeconds: true,
};
/** The name of every option configure accepts (every key of QueueOptions). */
export const QUEUE_OPTION_NAMES = Object.freeze(Object.keys(optionKeys));
