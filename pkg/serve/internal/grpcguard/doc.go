// Package grpcguard is the gRPC side's guard against hostile and heavy traffic: the server
// options that bound a connection (calls open, header list, flow-control windows, the server-wide
// receive limit), the tap handle that checks a call's token on its headers before its message is
// read, the read slots of calls without a token, the read admission in front of each handler
// (internal/admission's read pool), the codec that refuses a message over its method's limit
// without decoding it, the chain's step for a direct call's message (Receive), the guard of
// streaming calls, the watch that closes abusive connections, the sweep that logs calls gRPC ended
// before any interceptor, and the probe server the kubelet asks. guard.go says why each exists.
package grpcguard
