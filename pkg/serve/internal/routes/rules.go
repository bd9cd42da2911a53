package routes

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	batchv1 "github.com/yardstick-dev/yardstick/proto/yardstick/batch/v1"
)

// Rule is what a method requires of its caller, read from the contract's method options
// (yardstick.auth.v1.public / permission).
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

// IsPublicService reports whether the gRPC service name is an infrastructure service (health,
// reflection), open to every caller.
func IsPublicService(name string) bool { return publicServices[name] }

// readRecordable reads which methods of services a batch record may name, from the method
// option yardstick.batch.v1.record.
func readRecordable(services map[string]grpc.ServiceInfo) map[string]bool {
	out := map[string]bool{}
	for svcName := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
		if err != nil {
			continue // readRules has refused the table already
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			if proto.GetExtension(md.Options(), batchv1.E_Record).(bool) {
				out["/"+svcName+"/"+string(md.Name())] = true
			}
		}
	}
	return out
}

// readRules reads the access rule of every method of services from the method options. A method
// of ours with neither option gets no rule and is refused: a forgotten option fails closed.
func readRules(services map[string]grpc.ServiceInfo) (map[string]Rule, error) {
	rules := map[string]Rule{}
	for svcName, info := range services {
		if publicServices[svcName] {
			for _, m := range info.Methods {
				rules["/"+svcName+"/"+m.Name] = Rule{Public: true}
			}
			continue
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svcName))
		if err != nil {
			return nil, fmt.Errorf("descriptor of service %s: %w", svcName, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is not a service", svcName)
		}
		for i := 0; i < sd.Methods().Len(); i++ {
			md := sd.Methods().Get(i)
			opts := md.Options()
			rule := Rule{
				Public:     proto.GetExtension(opts, authv1.E_Public).(bool),
				Permission: proto.GetExtension(opts, authv1.E_Permission).(string),
				Also:       proto.GetExtension(opts, authv1.E_AlsoPermission).(string),
			}
			if rule.Public || rule.Permission != "" {
				rules["/"+svcName+"/"+string(md.Name())] = rule
			}
		}
	}
	return rules, nil
}
