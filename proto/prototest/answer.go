package prototest

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// AnswerAll is the contract's service of that name (as registered by its generated code) with
// every unary rpc answered with an empty response, whatever rpcs the contract has, through the
// server's interceptors; every stream is a stub answering Unimplemented. A test of what runs
// before a handler (routing, auth, limits, decoding) serves it in place of the real service.
func AnswerAll(t testing.TB, name string) *grpc.ServiceDesc {
	t.Helper()
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		t.Fatalf("%s is a %T, not a service", name, d)
	}
	desc := &grpc.ServiceDesc{ServiceName: name, HandlerType: (*any)(nil), Metadata: sd.ParentFile().Path()}
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		if md.IsStreamingClient() || md.IsStreamingServer() {
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: string(md.Name()), ClientStreams: md.IsStreamingClient(), ServerStreams: md.IsStreamingServer(),
				Handler: func(any, grpc.ServerStream) error { return status.Error(codes.Unimplemented, "a stub") }})
			continue
		}
		in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			t.Fatal(err)
		}
		out, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
		if err != nil {
			t.Fatal(err)
		}
		full := "/" + name + "/" + string(md.Name())
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: string(md.Name()), Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := in.New().Interface()
			if err := dec(req); err != nil {
				return nil, err
			}
			answer := func(context.Context, any) (any, error) { return out.New().Interface(), nil }
			if interceptor == nil {
				return answer(ctx, req)
			}
			return interceptor(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: full}, answer)
		}})
	}
	return desc
}
