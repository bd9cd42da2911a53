// Package prototest builds the contract's messages and services for tests: requests of an exact
// encoded size, to hold a size limit at its boundary (the last size accepted, the first
// refused), and a service answering every rpc empty (AnswerAll). It is for tests only; it lives
// in the contract's module because what it builds is the contract's, and so that the frame's
// tests and its internal packages' share the one copy.
package prototest

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	forecastv1 "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// OfSize is the message build makes of exactly n bytes: build(pad) puts pad in one string
// field, whose length is corrected by the size missed until it fits (a few rounds, as the
// field's length prefix grows). A size build cannot make fails the test.
func OfSize[M proto.Message](t testing.TB, n int, build func(pad string) M) M {
	t.Helper()
	m, ok := ofSize(n, build)
	if !ok {
		t.Fatalf("no %T of %d bytes", m, n)
	}
	return m
}

func ofSize[M proto.Message](n int, build func(pad string) M) (M, bool) {
	k := n
	for range 8 {
		m := build(strings.Repeat("x", max(k, 0)))
		size := proto.Size(m)
		if size == n {
			return m, true
		}
		k += n - size
	}
	var zero M
	return zero, false
}

// Score is a ScoreItemResults request of exactly n bytes: one item whose id fills it.
func Score(t testing.TB, n int) *scoringv1.ScoreItemResultsRequest {
	t.Helper()
	return OfSize(t, n, func(pad string) *scoringv1.ScoreItemResultsRequest {
		return &scoringv1.ScoreItemResultsRequest{Items: []*scoringv1.ItemResult{{Id: &pad, Result: proto.Int32(1)}}}
	})
}

// Issue is an IssueToken request of exactly n bytes: the demo client with a long, wrong secret.
func Issue(t testing.TB, n int) *authv1.IssueTokenRequest {
	t.Helper()
	return OfSize(t, n, func(pad string) *authv1.IssueTokenRequest {
		return &authv1.IssueTokenRequest{ClientId: proto.String("demo"), ClientSecret: &pad}
	})
}

// Group is a group forecast request of exactly n bytes: packed cut levels (8 bytes each), then
// empty students (2 bytes each) and test_uncertainty (9 bytes) for the remainder.
func Group(t testing.TB, n int) *forecastv1.GroupForecastRequest {
	t.Helper()
	for cuts := (n - 16) / 8; cuts > (n-16)/8-8; cuts-- {
		m := &forecastv1.GroupForecastRequest{CutLevels: make([]float64, max(cuts, 0))}
		rest := n - proto.Size(m)
		if rest%2 == 1 && rest >= 9 {
			m.TestUncertainty = proto.Float64(1)
			rest -= 9
		}
		if rest < 0 || rest%2 == 1 {
			continue
		}
		m.StudentData = make([]*forecastv1.StudentData, rest/2)
		for i := range m.StudentData {
			m.StudentData[i] = &forecastv1.StudentData{}
		}
		if proto.Size(m) == n {
			return m
		}
	}
	t.Fatalf("no group forecast request of %d bytes", n)
	return nil
}
