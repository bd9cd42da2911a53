package serve

import (
	"bytes"
	"context"
	_ "embed"
	"reflect"
	"slices"
	"strings"
	"sync"
	_ "unsafe" // go:linkname, below

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/yardstick-dev/yardstick/pkg/serve/rpcerr"
	throwawayv1 "github.com/yardstick-dev/yardstick/pkg/serve/testdata/throwaway/v1"
)

// The newcomer's service of TestThrowawayEndpoint: the contract testdata/throwaway/v1/throwaway.proto
// (a new file of the scoring service's package), its HTTP rules testdata/throwaway/http.yaml, and
// the code make generate writes from them (testdata/throwaway/generate.sh: the messages, their JSON
// codecs and protobuf decoders, vtprotobuf's codecs, the gRPC service, the gateway's registration,
// the OpenAPI document). What is written by hand is what a newcomer writes: the handler
// (reverser), the service's value (reverserService: the generated registrations, its batch and
// one JSON alias of its own) and this test.

// throwawayRules is the throwaway contract's http.yaml.
//
//go:embed testdata/throwaway/http.yaml
var throwawayRules []byte

// contractRules is the contract's http.yaml as package yardstick embeds it (proto/yardstick/routes.go):
// the file a newcomer adds an rpc's rule to, and the one the frame reads rules from.
//
//go:linkname contractRules github.com/yardstick-dev/yardstick/proto/yardstick.httpRules
var contractRules []byte

// The throwaway contract's rules join the contract's, in this test binary only, as a newcomer's
// rule joins proto/yardstick/http.yaml: before any test reads them (package yardstick parses the
// file on each call; the frame and the gateway's generator read the same rules).
func init() {
	_, rules, ok := bytes.Cut(throwawayRules, []byte("\n  rules:\n"))
	if !ok {
		panic("testdata/throwaway/http.yaml: no http.rules list")
	}
	contractRules = append(append(slices.Clip(contractRules), '\n'), rules...)
}

const (
	reversePath      = "/api/throwaway/reverse"       // its rule, in testdata/throwaway/http.yaml
	reverseBatchPath = "/api/throwaway/reverse/batch" // its NDJSON batch, the service's value names it
	reversePerm      = "throwaway:reverse"            // the permissions the contract declares
	reverseBulkPerm  = "throwaway:bulk"
)

// reverser is the newcomer's handler: Reverse answers the request's text with its pieces
// appended, reversed, its label and the client the token names; a request without text is
// refused with a problem of the field. It notes how each request arrived (decodedBy).
type reverser struct {
	throwawayv1.UnimplementedThrowawayServiceServer
	mu      sync.Mutex
	chunked map[string]bool // by label: whether the request's pieces came in one chunk
}

func (r *reverser) Reverse(ctx context.Context, in *throwawayv1.ReverseRequest) (*throwawayv1.ReverseResponse, error) {
	if in.Text == nil {
		var p rpcerr.Problems
		p.Add("text", "is required")
		return nil, p.Err()
	}
	r.mu.Lock()
	r.chunked[in.GetLabel()] = chunked(in.GetPieces())
	r.mu.Unlock()
	var b strings.Builder
	b.WriteString(in.GetText())
	for _, p := range in.GetPieces() {
		b.WriteString(strings.Repeat(p.GetText(), max(int(p.GetCount()), 1)))
	}
	text := []rune(b.String())
	slices.Reverse(text)
	client, _ := ClaimsFrom(ctx)
	return &throwawayv1.ReverseResponse{Text: proto.String(string(text)), Label: in.Label, Client: proto.String(client.ClientID)}, nil
}

// wasChunked reports whether the request labelled label had its pieces in one chunk, and whether
// such a request was answered at all.
func (r *reverser) wasChunked(label string) (chunked, seen bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	chunked, seen = r.chunked[label]
	return chunked, seen
}

// pieceSize is a ReversePiece's size in memory: 56 bytes, which no size class of Go's allocator
// has (a piece allocated on its own takes a 64-byte slot).
var pieceSize = reflect.TypeFor[throwawayv1.ReversePiece]().Size()

// chunked reports whether two consecutive pieces lie exactly pieceSize bytes apart: elements of
// one array. The generated decoders (DecodeJSONWire, DecodeProtoWire) take a list's messages
// from chunks (jsoncodec.Pool); protojson's and protoreflect's fallbacks, protobuf-go and
// vtprotobuf allocate each on its own, in 64-byte slots, which are never 56 bytes apart. A chunk
// may end within a list, so of three pairs or more at least one is in one chunk.
func chunked(pieces []*throwawayv1.ReversePiece) bool {
	for i := 1; i < len(pieces); i++ {
		if reflect.ValueOf(pieces[i]).Pointer()-reflect.ValueOf(pieces[i-1]).Pointer() == pieceSize {
			return true
		}
	}
	return false
}

// reverserService is the newcomer's service as it brings itself to the frame: the generated
// registrations on both doors, its NDJSON batch path and gRPC batch rpc, and its own JSON rule
// ("words" is another spelling of "text").
func reverserService(r *reverser) Service {
	return Service{
		Register: func(g grpc.ServiceRegistrar) { throwawayv1.RegisterThrowawayServiceServer(g, r) },
		Gateway: func(ctx context.Context, mux *runtime.ServeMux, conn grpc.ClientConnInterface) error {
			return throwawayv1.RegisterThrowawayServiceHandlerClient(ctx, mux, throwawayv1.NewThrowawayServiceClient(conn))
		},
		Wire:      WireRules{Aliases: map[protoreflect.FullName]map[string]string{"yardstick.scoring.v1.ReverseRequest": {"words": "text"}}},
		BatchPath: reverseBatchPath,
		BatchRPC:  throwawayv1.ThrowawayService_ReverseBatch_FullMethodName,
	}
}
