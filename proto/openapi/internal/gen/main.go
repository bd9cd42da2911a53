// Command gen writes the OpenAPI 3.0 document of each service (proto/openapi/<service>.openapi.json)
// from the Swagger 2.0 files protoc-gen-openapiv2 generated and the checked-in overlay. `make
// generate` runs it after buf; it fails, writing nothing, when the overlay names a schema,
// property or path that no longer exists or the result is not valid OpenAPI 3.0.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/yardstick-dev/yardstick/proto/openapi/internal/overlay"
	authv1 "github.com/yardstick-dev/yardstick/proto/yardstick/auth/v1"
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/forecast/v1" // registers the services read below
	_ "github.com/yardstick-dev/yardstick/proto/yardstick/scoring/v1"
)

func main() {
	dir := flag.String("dir", "proto/openapi", "directory holding yardstick/*/v1/*.swagger.json and overlay.yaml; documents are written there")
	services := flag.String("services", "scoring,forecast", "services to write a document for")
	flag.Parse()
	if err := run(*dir, strings.Split(*services, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "openapi gen:", err)
		os.Exit(1)
	}
}

func run(dir string, services []string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "overlay.yaml"))
	if err != nil {
		return fmt.Errorf("read overlay: %w", err)
	}
	o, err := overlay.Parse(raw)
	if err != nil {
		return err
	}
	o.Permissions = permissions()
	// The committed documents say "dev"; the server puts its build's version in at run time.
	docs, err := overlay.Build(os.DirFS(dir), o, services, "dev")
	if err != nil {
		return err
	}
	for _, svc := range services {
		if err := os.WriteFile(filepath.Join(dir, svc+".openapi.json"), docs[svc], 0o644); err != nil {
			return fmt.Errorf("write %s document: %w", svc, err)
		}
	}
	return nil
}

// permissions reads the contract's permission options: for each rpc, by its operationId
// (Service_Method), the permission and the second permission (also_permission) a token needs.
func permissions() func(rpc string) ([]string, bool) {
	byRPC := map[string][]string{}
	for _, pkg := range []protoreflect.FullName{"yardstick.auth.v1", "yardstick.scoring.v1", "yardstick.forecast.v1"} {
		protoregistry.GlobalFiles.RangeFilesByPackage(pkg, func(f protoreflect.FileDescriptor) bool {
			for i := range f.Services().Len() {
				svc := f.Services().Get(i)
				for j := range svc.Methods().Len() {
					m := svc.Methods().Get(j)
					var perms []string
					for _, ext := range []protoreflect.ExtensionType{authv1.E_Permission, authv1.E_AlsoPermission} {
						if p, _ := proto.GetExtension(m.Options(), ext).(string); p != "" {
							perms = append(perms, p)
						}
					}
					byRPC[string(svc.Name())+"_"+string(m.Name())] = perms
				}
			}
			return true
		})
	}
	return func(rpc string) ([]string, bool) {
		perms, ok := byRPC[rpc]
		return perms, ok
	}
}
