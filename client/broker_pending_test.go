package client_test

// Integration tests for broker routes that do not exist yet go here, so that their 404
// no_such_route failures are easy to tell apart. Every route the SDK calls is on the broker now
// (transactions, lease extension, DLQ, resources, consumer groups, seeks, maintenance, status),
// so their tests live in broker_test.go and this file is empty.
