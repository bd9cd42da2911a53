package serve

import (
	"cmp"
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/yardstick-dev/yardstick/pkg/token"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// TestThrowawayEndpoint: an rpc the frame has never heard of, declared in its own contract with
// its permission, its batch option and its HTTP rule, and given a handler, is served on both
// fronts and in batches to a client the clients file grants its permission, refused to one
// without it, and nothing of the frame or of pkg/token changed for it.
func TestThrowawayEndpoint(t *testing.T) {
	t.Parallel()
	registerThrowaway(t)
	secret, hash, err := token.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	entry := func(id, services string, perms ...string) string {
		return "  - clientId: " + id + "\n    secretHash: " + hash + "\n    services: [" + services + "]\n" +
			"    permissions: [\"" + strings.Join(perms, `", "`) + "\"]\n"
	}
	clientsFile := func(t *testing.T, entries ...string) string {
		path := filepath.Join(t.TempDir(), "clients.yaml")
		if err := os.WriteFile(path, []byte("clients:\n"+strings.Join(entries, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// The contract's package makes its permissions the scoring service's: a client must list it.
	t.Run("its permissions are scoring's", func(t *testing.T) {
		_, err := token.New(token.Options{ClientsFile: clientsFile(t, entry("reader", "forecast", throwawayPerm)), Dev: true})
		if want := `permission "` + throwawayPerm + `" needs service "scoring"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want an error with %s", err, want)
		}
	})

	// Nothing of the frame or of pkg/token was written for it: no code of theirs (tests aside)
	// names the service, its paths or its permissions.
	t.Run("nothing of the frame names it", func(t *testing.T) {
		for _, dir := range []string{".", "../token"} {
			named, scanned := codeNaming(t, dir, "EchoService", "throwaway", "Echo")
			if len(named) > 0 || scanned < 10 {
				t.Errorf("%s: %q of %d files name the test service; want none of 10 or more", dir, named, scanned)
			}
		}
	})

	cfg := testConfig(t)
	cfg.ClientsFile = clientsFile(t,
		entry("echoer", "scoring", throwawayPerm, throwawayBatchPerm),
		entry("other", "scoring", "score:standard", throwawayBatchPerm), // the batches, not the rpc
		entry("unbatched", "scoring", throwawayPerm))                    // the rpc, not the batches
	h := startTest(t, cfg) // the test service: the throwaway contract, its handlers, its wire rule
	echoer, other, unbatched := h.token("echoer", secret), h.token("other", secret), h.token("unbatched", secret)

	t.Run("JSON", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok, body string
			status          int
			want            string
		}{
			{"answered", echoer, `{"text":"hello"}`, http.StatusOK, `{"text":"HELLO","client":"echoer"}`},
			{"its own alias", echoer, `{"words":"hello"}`, http.StatusOK, `{"text":"HELLO","client":"echoer"}`},
			{"a field it has no rule for", echoer, `{"itemid":"hello"}`, http.StatusBadRequest, `itemid`},
			{"the handler's error", echoer, `{}`, http.StatusBadRequest, `text is required`},
			{"without its permission", other, `{"text":"hello"}`, http.StatusForbidden, throwawayPerm},
			{"without a token", "", `{"text":"hello"}`, http.StatusUnauthorized, "Authentication failed."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var header []string
				if tc.tok != "" {
					header = []string{"Authorization", "Bearer " + tc.tok}
				}
				r := h.post(throwawayPath, tc.body, header...)
				if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
					t.Errorf("got %d %s; want %d with %s", r.status, r.body, tc.status, tc.want)
				}
			})
		}
	})

	t.Run("gRPC", func(t *testing.T) {
		for _, tc := range []struct {
			name, tok, text string
			code            codes.Code
			want            string
		}{
			{"answered", echoer, "hello", codes.OK, "HELLO"},
			{"the handler's error", echoer, "", codes.InvalidArgument, ""},
			{"without its permission", other, "hello", codes.PermissionDenied, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tc.tok)
				in, out := dynamicpb.NewMessage(echoIn), dynamicpb.NewMessage(echoOut)
				in.Set(echoIn.Fields().ByName("text"), protoreflect.ValueOfString(tc.text))
				err := h.grpc.Invoke(ctx, throwawayMethod, in, out)
				if status.Code(err) != tc.code || out.Get(echoOut.Fields().ByName("text")).String() != tc.want {
					t.Errorf("got %v, %v; want %v, %q", out, err, tc.code, tc.want)
				}
			})
		}
	})

	t.Run("gRPC batch", func(t *testing.T) { testThrowawayGRPCBatch(t, h, echoer, other, unbatched) })

	t.Run("NDJSON batch", func(t *testing.T) {
		body := `{"id":"1","path":"` + throwawayPath + `","body":{"text":"batched"}}` + "\n" +
			`{"id":"2","path":"` + throwawayPath + `","body":{}}` + "\n"
		for _, tc := range []struct {
			name, tok string
			status    int
			want      []string
		}{
			{"answered", echoer, http.StatusOK, []string{`"id":"1","status":200,"body":{"text":"BATCHED","client":"echoer"}`, `"id":"2","status":400`}},
			{"without its permission", other, http.StatusOK, []string{`"id":"1","status":403`, `"id":"2","status":403`}},
			{"without the batch permission", unbatched, http.StatusForbidden, []string{throwawayBatchPerm}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := h.do(http.MethodPost, throwawayBatchPath, "application/x-ndjson", body, "Authorization", "Bearer "+tc.tok)
				if r.status != tc.status {
					t.Fatalf("got %d %s; want %d", r.status, r.body, tc.status)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(r.body), w) {
						t.Errorf("answers %s; want one with %s", r.body, w)
					}
				}
			})
		}
	})
}

// testThrowawayGRPCBatch: the throwaway rpc's records in a gRPC batch, answered to echoer,
// refused one by one to other (the batch, not the rpc), refused whole to unbatched.
func testThrowawayGRPCBatch(t *testing.T, h *harness, echoer, other, unbatched string) {
	for _, tc := range []struct {
		name, tok string
		stream    codes.Code // the stream's own status: without the batch permission, refused whole
		want      string     // the answer's response text, or "" for an error
		code      codes.Code // the answer's error code
	}{
		{"answered", echoer, codes.OK, "BATCHED", codes.OK},
		{"without its permission", other, codes.OK, "", codes.PermissionDenied},
		{"without the batch permission", unbatched, codes.PermissionDenied, "", codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tc.tok)
			st, err := h.grpc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, throwawayBatch)
			if err != nil {
				t.Fatal(err)
			}
			in := dynamicpb.NewMessage(echoIn)
			in.Set(echoIn.Fields().ByName("text"), protoreflect.ValueOfString("batched"))
			rec := dynamicpb.NewMessage(echoRecord)
			rec.Set(echoRecord.Fields().ByName("id"), protoreflect.ValueOfString("1"))
			rec.Set(echoRecord.Fields().ByName("echo"), protoreflect.ValueOfMessage(in))
			// A refused stream may end before the record is sent; its status comes with RecvMsg.
			if err := st.SendMsg(rec); err != nil && tc.stream == codes.OK {
				t.Fatal(err)
			}
			if err := st.CloseSend(); err != nil {
				t.Fatal(err)
			}
			ans := dynamicpb.NewMessage(echoAnswer)
			if err := st.RecvMsg(ans); status.Code(err) != tc.stream {
				t.Fatalf("answer: got %v; want %v", err, tc.stream)
			} else if err != nil {
				return
			}
			got := ans.Get(echoAnswer.Fields().ByName("echo_response")).Message().Get(echoOut.Fields().ByName("text")).String()
			var code codes.Code
			if ans.Has(echoAnswer.Fields().ByName("error")) {
				code = codes.Code(ans.Get(echoAnswer.Fields().ByName("error")).Message().Get(
					(&batchv1.Status{}).ProtoReflect().Descriptor().Fields().ByName("code")).Int())
			}
			if got != tc.want || code != tc.code || ans.Get(echoAnswer.Fields().ByName("id")).String() != "1" {
				t.Errorf("got answer %v; want id 1 with %q, code %v", ans, tc.want, tc.code)
			}
		})
	}
}

// codeNaming lists the Go files under dir, tests and testdata aside, that hold one of words as a
// whole word (case-sensitive), and how many files it read.
func codeNaming(t *testing.T, dir string, words ...string) (named []string, scanned int) {
	t.Helper()
	re := regexp.MustCompile(`\b(` + strings.Join(words, "|") + `)\b`)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == "testdata" {
			return cmp.Or(err, filepath.SkipDir)
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		scanned++
		src, err := os.ReadFile(path)
		if err == nil && re.Match(src) {
			named = append(named, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return named, scanned
}
