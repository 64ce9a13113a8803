package capture

// Message is message, for the tests of package capture_test.
var Message = message
