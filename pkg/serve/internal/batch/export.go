package batch

// TooLargeAnswer is the body of a line over the default limit, for the client
// (cmd/yardstick-batch, through the public package ndjson), which checks its input by the
// engine's own rules (LineReader, Blank, ParseRecord): a line the engine would refuse is answered
// the same way without being sent.
func TooLargeAnswer() []byte { return append([]byte(nil), tooLargeBody...) }
