package serve

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestServiceSettings: a service's own settings (Identity.Settings) are read, checked and listed
// as the frame's are: defaults, the environment, flags over it, every problem reported with the
// frame's, its checks between settings with the frame's values, -help after the frame's; each
// configuration read fills a value of its own.
func TestServiceSettings(t *testing.T) {
	t.Parallel()
	dev := "YARDSTICK_DEV=true"
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		want    fakeLimits
		wantErr []string
	}{
		{name: "defaults", env: []string{dev}, want: fakeDefaults},
		{name: "environment, a flag over it", env: []string{dev, "YARDSTICK_MAX_ITEMS=7", "YARDSTICK_MAX_STUDENTS=9"}, args: []string{"-max-students", "1"},
			want: fakeLimits{MaxGroupBodyBytes: 16 << 20, MaxItems: 7, MaxStudents: 1, MaxCutLevels: 20}},
		{name: "a group body of exactly the body limit", env: []string{dev, "YARDSTICK_MAX_GROUP_BODY_BYTES=1048576"},
			want: fakeLimits{MaxGroupBodyBytes: 1 << 20, MaxItems: 5000, MaxStudents: 100000, MaxCutLevels: 20}},
		{name: "a group body a byte under the body limit", env: []string{dev, "YARDSTICK_MAX_GROUP_BODY_BYTES=1048575"},
			wantErr: []string{"YARDSTICK_MAX_GROUP_BODY_BYTES 1048575: want YARDSTICK_MAX_BODY_BYTES (1048576) or more"}},
		{name: "not a number, with a frame's problem", env: []string{dev, "YARDSTICK_MAX_ITEMS=many", "YARDSTICK_TOKEN_TTL=soon"},
			wantErr: []string{`YARDSTICK_MAX_ITEMS: "many" is not a whole number`, `YARDSTICK_TOKEN_TTL: "soon" is not a duration`}},
		{name: "out of range, with a frame's problem", env: []string{"YARDSTICK_MAX_CUT_LEVELS=0"},
			wantErr: []string{"YARDSTICK_MAX_CUT_LEVELS 0: want 1 or more", "YARDSTICK_CLIENTS_FILE is required"}},
		{name: "a flag's bad value", env: []string{dev}, args: []string{"-max-group-body-bytes", "big"},
			wantErr: []string{`invalid value "big" for flag -max-group-body-bytes: "big" is not a number of bytes`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(scoringID, tc.args, tc.env, io.Discard)
			if len(tc.wantErr) > 0 {
				for _, frag := range tc.wantErr {
					if err == nil || !strings.Contains(err.Error(), frag) {
						t.Errorf("got error %v; want it to mention %q", err, frag)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := *limitsOf(c); got != tc.want {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate: got %v; want nil", err)
			}
		})
	}
	t.Run("a read of its own", func(t *testing.T) {
		t.Parallel()
		a, errA := LoadConfig(scoringID, nil, []string{dev, "YARDSTICK_MAX_ITEMS=3"}, io.Discard)
		b, errB := LoadConfig(scoringID, nil, []string{dev}, io.Discard)
		if errA != nil || errB != nil || limitsOf(a).MaxItems != 3 || limitsOf(b).MaxItems != 5000 {
			t.Errorf("got %v %v, items %d and %d; want 3 and 5000", errA, errB, limitsOf(a).MaxItems, limitsOf(b).MaxItems)
		}
	})
	t.Run("Validate runs the service's checks", func(t *testing.T) {
		t.Parallel()
		c, err := LoadConfig(scoringID, nil, []string{dev}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		limitsOf(c).MaxCutLevels = 0
		c.MaxBodyBytes = 32 << 20
		err = c.Validate()
		for _, want := range []string{"YARDSTICK_MAX_CUT_LEVELS 0: want 1 or more", "YARDSTICK_MAX_GROUP_BODY_BYTES 16777216: want YARDSTICK_MAX_BODY_BYTES (33554432) or more"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v; want it to mention %q", err, want)
			}
		}
	})
}

// TestServiceSettingsInHelp: the service's settings follow the frame's in -help, in its order,
// written as the frame's are.
func TestServiceSettingsInHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if _, err := LoadConfig(forecastID, []string{"-help"}, nil, &out); !errors.Is(err, ErrHelp) {
		t.Fatalf("got err %v; want ErrHelp", err)
	}
	want := "  -max-body-bytes int\n    \tlargest request body (env YARDSTICK_MAX_BODY_BYTES, default \"1048576\")\n" +
		"  -max-group-body-bytes int\n    \tlargest group forecast request body (env YARDSTICK_MAX_GROUP_BODY_BYTES, default \"16777216\")\n" +
		"  -max-items int\n    \tmost items in one scoring request (env YARDSTICK_MAX_ITEMS, default \"5000\")\n" +
		"  -max-students int\n    \tmost students in one group forecast (env YARDSTICK_MAX_STUDENTS, default \"100000\")\n" +
		"  -max-cut-levels int\n    \tmost cut levels in one forecast (env YARDSTICK_MAX_CUT_LEVELS, default \"20\")\n" +
		"  -version\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("help lacks the service's settings after the frame's:\n%s\ngot:\n%s", want, out.String())
	}
}

// TestNoServiceSettings: a service without settings of its own has the frame's alone: another
// service's setting is unknown, as a misspelt one is, and so is its flag.
func TestNoServiceSettings(t *testing.T) {
	t.Parallel()
	bare := Identity{Name: "bare", HTTPAddr: ":8080", GRPCAddr: ":9090"}
	c, err := LoadConfig(bare, nil, []string{"YARDSTICK_DEV=true"}, io.Discard)
	if err != nil || c.Own != nil {
		t.Fatalf("got %v, own %v; want no error, nothing of its own", err, c.Own)
	}
	if _, err := LoadConfig(bare, nil, []string{"YARDSTICK_DEV=true", "YARDSTICK_MAX_ITEMS=5"}, io.Discard); err == nil || !strings.Contains(err.Error(), "unknown setting YARDSTICK_MAX_ITEMS") {
		t.Errorf("got %v; want YARDSTICK_MAX_ITEMS unknown", err)
	}
	if _, err := LoadConfig(bare, []string{"-max-items", "5"}, []string{"YARDSTICK_DEV=true"}, io.Discard); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -max-items") {
		t.Errorf("got %v; want -max-items undefined", err)
	}
}
