package yardstick

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	// Both services' contracts, registered in every binary that asks: a service's clients file
	// grants the other service's permissions too.
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1"
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

// Permissions maps each permission the contract declares on an rpc (the method options
// yardstick.auth.v1.permission and also_permission) to the service that serves the rpc, named
// by its package: yardstick.scoring.v1's rpcs are the scoring service's. It reads every
// yardstick.* file registered in protoregistry.GlobalFiles at the time of the call, so an rpc
// registered at run time (a test's) counts as well. A permission declared in two services'
// packages is an error: a token is for one service and carries that service's permissions.
func Permissions() (map[string]string, error) { return permissionsIn(protoregistry.GlobalFiles) }

func permissionsIn(reg *protoregistry.Files) (map[string]string, error) {
	// The files are collected under the registry's lock and read after it: reading a method
	// resolves names in the registry, which takes the lock again, and a registration waiting
	// between the two would deadlock.
	var files []protoreflect.FileDescriptor
	reg.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(string(fd.Package()), "yardstick.") {
			files = append(files, fd)
		}
		return true
	})
	owners := map[string]string{}
	for _, fd := range files {
		service := strings.Split(string(fd.Package()), ".")[1]
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				opts := methods.Get(j).Options()
				for _, ext := range []protoreflect.ExtensionType{authv1.E_Permission, authv1.E_AlsoPermission} {
					perm := proto.GetExtension(opts, ext).(string)
					if perm == "" {
						continue
					}
					if other, ok := owners[perm]; ok && other != service {
						return nil, fmt.Errorf("permission %q is declared on rpcs of both %s and %s (%s): a permission belongs to one service",
							perm, other, service, methods.Get(j).FullName())
					}
					owners[perm] = service
				}
			}
		}
	}
	return owners, nil
}
