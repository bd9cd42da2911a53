package scoring

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/pkg/serve"
	scoringv1 "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
	"github.com/yardstick-dev/yardstick/services/servetest"
)

// defaults are the limits docs/operations.md documents.
var defaults = Limits{MaxItems: 5000}

// TestSettings: the item limit as a setting, with the environment variable, flag, default,
// -help line and errors docs/operations.md documents, at both sides of its bound; the forecast
// service's limits are not the scoring service's settings.
func TestSettings(t *testing.T) {
	t.Parallel()
	dev := "YARDSTICK_DEV=true"
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		want    Limits
		wantErr string
	}{
		{name: "defaults", env: []string{dev}, want: defaults},
		{name: "one item", env: []string{dev, "YARDSTICK_MAX_ITEMS=1"}, want: Limits{MaxItems: 1}},
		{name: "the flag over the environment", env: []string{dev, "YARDSTICK_MAX_ITEMS=7"}, args: []string{"-max-items", "8"}, want: Limits{MaxItems: 8}},
		{name: "no items", env: []string{dev, "YARDSTICK_MAX_ITEMS=0"}, wantErr: "YARDSTICK_MAX_ITEMS 0: want 1 or more"},
		{name: "not a number", env: []string{dev, "YARDSTICK_MAX_ITEMS=many"}, wantErr: `YARDSTICK_MAX_ITEMS: "many" is not a whole number`},
		{name: "a forecast limit", env: []string{dev, "YARDSTICK_MAX_STUDENTS=10"}, wantErr: "unknown setting YARDSTICK_MAX_STUDENTS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := serve.LoadConfig(testIdentity, tc.args, tc.env, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got error %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := LimitsOf(cfg); got != tc.want {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestSettingsHelp: -help lists the item limit last, after the frame's body limit.
func TestSettingsHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := serve.LoadConfig(testIdentity, []string{"-help"}, nil, &out); !errors.Is(err, serve.ErrHelp) {
		t.Fatalf("got %v; want ErrHelp", err)
	}
	want := "  -max-body-bytes int\n    \tlargest request body (env YARDSTICK_MAX_BODY_BYTES, default \"1048576\")\n" +
		"  -max-items int\n    \tmost items in one scoring request (env YARDSTICK_MAX_ITEMS, default \"5000\")\n" +
		"  -version\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("help lacks\n%s\ngot:\n%s", want, out.String())
	}
}

// TestDocumentedSizes: the item lists' size the scoring document states is the default limit.
func TestDocumentedSizes(t *testing.T) {
	t.Parallel()
	if n := servetest.DocumentedSizes(t, "scoring", map[string]int{"items": defaults.MaxItems}); n < 8 {
		t.Errorf("checked %d lists; want every request's items (8 or more)", n)
	}
}

// TestListLimitsCoverTheContract: every list of items a scoring rpc takes (batch records
// included) is decoded no further than the item limit, and so is every other list.
func TestListLimitsCoverTheContract(t *testing.T) {
	t.Parallel()
	rules := WireRules(defaults)
	lists := servetest.RequestLists([]string{"items"}, scoringv1.File_yardstick_scoring_v1_scoring_proto.Services().Get(0),
		scoringv1.File_yardstick_scoring_v1_content_proto.Services().Get(0))
	if len(lists) < 8 {
		t.Fatalf("found %v; want the items of 8 requests or more", lists)
	}
	for msg := range lists {
		if got := rules.ListLimits[msg]["items"]; got != defaults.MaxItems {
			t.Errorf("%s.items: limit %d; want %d", msg, got, defaults.MaxItems)
		}
	}
	if len(rules.ListLimits) != len(lists) || rules.MaxListLen != defaults.MaxItems {
		t.Errorf("limits of %d lists, every other %d; want %d (those the rpcs take), %d", len(rules.ListLimits), rules.MaxListLen, len(lists), defaults.MaxItems)
	}
}
