package routes

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Rule is what a method requires of its caller, read from the contract's method options.
type Rule struct {
	Public     bool   // no token needed
	Permission string // the permission the token must carry
	Also       string // a second one it must carry as well ("": none; the group streams)
}

// publicServices are the infrastructure services: they carry no options of ours and need no token.
var publicServices = map[string]bool{
	"grpc.health.v1.Health":                    true,
	"grpc.reflection.v1.ServerReflection":      true,
	"grpc.reflection.v1alpha.ServerReflection": true,
}

// IsPublicService reports whether name is an infrastructure service (health, reflection).
func IsPublicService(name string) bool { return publicServices[name] }

// options reads a method's access rule from its options. A method of ours with neither access
// option gets no rule and is refused: a forgotten option fails closed.
func options(md protoreflect.MethodDescriptor) (rule Rule, ruled bool) {
	opts := md.Options()
	rule = Rule{
		Public:     proto.GetExtension(opts, authv1.E_Public).(bool),
		Permission: proto.GetExtension(opts, authv1.E_Permission).(string),
		Also:       proto.GetExtension(opts, authv1.E_AlsoPermission).(string),
	}
	if !rule.Public && rule.Permission == "" {
		return Rule{}, false
	}
	return rule, true
}

// recordable reports whether a batch record may name m: a unary rpc with yardstick.batch.v1.record.
func recordable(m protoreflect.MethodDescriptor) bool {
	return !m.IsStreamingClient() && !m.IsStreamingServer() && proto.GetExtension(m.Options(), batchv1.E_Record).(bool)
}
