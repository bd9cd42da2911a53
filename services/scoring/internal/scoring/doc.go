// Package scoring implements the scoring service's rpcs: each handler validates its request
// (every problem at once, named by field path), computes with pkg/measure and replies. It holds no
// math and no transport concerns of its own.
package scoring
