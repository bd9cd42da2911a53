package tie

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
)

var k8sDir = filepath.Join(repoRoot, "deploy", "k8s")

// TestBinariesAreBuiltLikeTheImage reads the build settings Go records in each binary: built
// from its own module with GOWORK=off (the shared modules come through replace lines), static and
// trimmed. (With -trimpath Go does not record -ldflags; TestDevReplicasShareSigningKeys reads the
// link-time version back from the running binary.)
func TestBinariesAreBuiltLikeTheImage(t *testing.T) {
	t.Parallel()
	for svc, bin := range binaries {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if want := "github.com/yardstick-dev/yardstick/services/" + svc; info.Main.Path != want {
				t.Errorf("main module %q; want %q", info.Main.Path, want)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if settings["-trimpath"] != "true" {
				t.Errorf("-trimpath = %q; want true", settings["-trimpath"])
			}
			if settings["CGO_ENABLED"] != "0" {
				t.Errorf("CGO_ENABLED = %q; want 0", settings["CGO_ENABLED"])
			}
			replaced := false
			for _, d := range info.Deps {
				if d.Path == "github.com/yardstick-dev/yardstick/pkg/serve" && d.Replace != nil && d.Replace.Path == "../../pkg/serve" {
					replaced = true
				}
			}
			if !replaced {
				t.Errorf("pkg/serve is not taken through the replace line ../../pkg/serve; was the build in workspace mode?")
			}
		})
	}
}

// overlay is a rendered overlay with what its operator supplies.
type overlay struct {
	name string
	set  *manifest.Set
	docs [][]byte
	op   Operator
}

func loadOverlay(t *testing.T, name string) overlay {
	t.Helper()
	docs, err := manifest.Render(filepath.Join(k8sDir, "overlays", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	o := overlay{name: name, set: s, docs: docs}
	if name == "prod" {
		o.op = operatorObjects(t)
	}
	return o
}

// operatorObjects makes the objects deploy/README.md tells the prod operator to create, with
// the file names its commands give them: the demo bundle as content, a clients file with a freshly
// hashed secret, a fresh Ed25519 key per service.
func operatorObjects(t *testing.T) Operator {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	op := Operator{}
	for _, c := range manifest.OperatorCreated(readme) {
		files := map[string][]byte{}
		switch {
		case c.Name == "yardstick-content" && c.FromDir:
			demo := filepath.Join(repoRoot, "pkg", "measure", "demo")
			entries, err := os.ReadDir(demo)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(demo, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[e.Name()] = b
			}
		case c.Name == "yardstick-clients" && len(c.Keys) == 1:
			files[c.Keys[0]] = clientsFile(t, "prod-lms", "prod-secret")
		case strings.HasSuffix(c.Name, "-keys") && c.FromDir:
			files["20260301T000000Z-a.pem"] = signingKey(t)
		default:
			t.Fatalf("the README creates %s %s (keys %v, from a directory %v); the test does not know what to put in it", c.Kind, c.Name, c.Keys, c.FromDir)
		}
		op[c.Kind+"/"+c.Name] = files
	}
	return op
}

// clientsFile is a clients file with one client whose secret is hashed with argon2id in the
// standard PHC form, computed here independently of pkg/token.
func clientsFile(t *testing.T, id, secret string) []byte {
	t.Helper()
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	key := argon2.IDKey([]byte(secret), salt, 1, 1024, 1, 32)
	b64 := base64.RawStdEncoding
	phc := fmt.Sprintf("$argon2id$v=19$m=1024,t=1,p=1$%s$%s", b64.EncodeToString(salt), b64.EncodeToString(key))
	return fmt.Appendf(nil, "clients:\n  - clientId: %s\n    secretHash: %q\n    services: [scoring, forecast]\n    permissions: [\"*\"]\n", id, phc)
}

// signingKey is a PKCS#8 PEM Ed25519 key, as openssl genpkey -algorithm ed25519 writes it.
func signingKey(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// TestManifestsRunTheBinaries is the tie check proper: every Deployment of every overlay starts
// its binary with exactly its env, args and volumes, and passes every probe it declares.
func TestManifestsRunTheBinaries(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"dev", "prod"} {
		o := loadOverlay(t, name)
		for _, d := range o.set.Deployments {
			t.Run(name+"/"+d.Name, func(t *testing.T) {
				t.Parallel()
				err := Check(context.Background(), o.set, d.Name, Options{Binary: binaries[d.Name], Operator: o.op})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
