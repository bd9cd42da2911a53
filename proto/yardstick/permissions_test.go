package yardstick

import (
	"maps"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
)

// TestPermissions: the contract's permissions, each with the service whose package declares it;
// those below among them (a new rpc's permission is added by the contract alone, so the list is
// not held to be all).
func TestPermissions(t *testing.T) {
	t.Parallel()
	got, err := Permissions()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"score:standard": "scoring", "score:bayes": "scoring", "score:strands": "scoring", "score:scale": "scoring",
		"score:adaptive": "scoring", "score:batch": "scoring", "content:read": "scoring",
		"forecast:reading": "forecast", "forecast:group": "forecast", "forecast:batch": "forecast",
	}
	for perm, service := range want {
		if got[perm] != service {
			t.Errorf("%s: got service %q; want %q (all: %v)", perm, got[perm], service, got)
		}
	}
	for perm, service := range got {
		if service != "scoring" && service != "forecast" {
			t.Errorf("%s: got service %q; want one of the contract's services", perm, service)
		}
	}
}

// TestPermissionsOfTwoServices: a permission declared in two services' packages is refused, and
// a package outside yardstick.* is not the contract's.
func TestPermissionsOfTwoServices(t *testing.T) {
	t.Parallel()
	file := func(pkg, perm string) *descriptorpb.FileDescriptorProto {
		opts := &descriptorpb.MethodOptions{}
		proto.SetExtension(opts, authv1.E_Permission, perm)
		return &descriptorpb.FileDescriptorProto{
			Name: proto.String(strings.ReplaceAll(pkg, ".", "/") + "/x.proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
			Dependency: []string{"google/protobuf/empty.proto"},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("X"), Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Do"), InputType: proto.String(".google.protobuf.Empty"), OutputType: proto.String(".google.protobuf.Empty"), Options: opts,
			}}}},
		}
	}
	for _, tc := range []struct {
		name  string
		files []*descriptorpb.FileDescriptorProto
		want  map[string]string
		err   string
	}{
		{"one service", []*descriptorpb.FileDescriptorProto{file("yardstick.scoring.v1", "x:do"), file("yardstick.scoring.v2", "x:do")},
			map[string]string{"x:do": "scoring"}, ""},
		{"two services", []*descriptorpb.FileDescriptorProto{file("yardstick.scoring.v1", "x:do"), file("yardstick.forecast.v1", "x:do")},
			nil, `permission "x:do" is declared on rpcs of both`},
		{"not the contract", []*descriptorpb.FileDescriptorProto{file("other.v1", "x:do")}, map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := new(protoregistry.Files)
			for _, fdp := range tc.files {
				fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles) // its imports are the global registry's
				if err != nil {
					t.Fatal(err)
				}
				if err := reg.RegisterFile(fd); err != nil {
					t.Fatal(err)
				}
			}
			got, err := permissionsIn(reg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
