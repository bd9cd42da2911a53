package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "object", in: `{"b":1,"a":[1.50,2e-05],"c":{}}`, want: "{\n  \"b\": 1,\n  \"a\": [\n    1.50,\n    2e-05\n  ],\n  \"c\": {}\n}\n"},
		{name: "trailing newline of curl output", in: "[]\n", want: "[]\n"},
		{name: "string kept as written", in: `"a\u003cb"`, want: "\"a\\u003cb\"\n"},
		{name: "not JSON", in: "<html>", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := run(strings.NewReader(tc.in), &out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got err %v; want error %v", err, tc.wantErr)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}
