package grpcguard

import (
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// codec is gRPC's protobuf codec, except that a message read into a wireMessage is not decoded:
// gRPC turns a codec's unmarshal error into Internal before any interceptor runs, and a decode
// allocates memory the budget has not admitted yet. So the guard's requests (read.go, stream.go)
// come off the wire as bytes, decoded once checked and admitted (message.go), a malformed one
// answered InvalidArgument with its details.
type codec struct {
	encoding.CodecV2 // gRPC's own: its name, Marshal, and Unmarshal of anything else
}

func newCodec() codec { return codec{CodecV2: encoding.GetCodecV2(grpcproto.Name)} }

// wireMessage is a request as gRPC received it: its bytes, not decoded yet. It holds a reference
// to gRPC's buffers (no copy) until decode or free gives them back.
type wireMessage struct {
	data mem.BufferSlice
	read bool // the codec filled it: a message of no bytes is read too
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	w, ok := v.(*wireMessage)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	w.free()   // a unary call's second message, which gRPC refuses once it has read it
	data.Ref() // gRPC frees its own reference when Unmarshal returns
	w.data, w.read = data, true
	return nil
}

type vtAnswer interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}

// Marshal encodes a message with its generated encoder, as gRPC's own codec does with protobuf-go
// (a buffer of gRPC's pool from its pooling threshold on); anything else with gRPC's own.
func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(vtAnswer)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		b := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(b); err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	pool := mem.DefaultBufferPool()
	b := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT((*b)[:size]); err != nil {
		pool.Put(b)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(b, pool)}, nil
}

func (w *wireMessage) size() int64 { return int64(w.data.Len()) }

// free gives the bytes back to gRPC's pool; a message freed is empty, and still read.
func (w *wireMessage) free() {
	w.data.Free() // nil (freed, or never read): nothing
	w.data = nil
}
