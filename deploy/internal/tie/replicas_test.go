package tie

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
	"github.com/yardstick-dev/yardstick/deploy/internal/yamledit"
)

// getJSON fetches url and decodes its JSON body into v.
func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, v)
}

// stopAll stops instances concurrently, as the kubelet terminates the pods of a scaled-down
// Deployment, and reports each that does not exit cleanly.
func stopAll(t *testing.T, instances []*Instance) {
	t.Helper()
	errs := make(chan error, len(instances))
	for _, in := range instances {
		go func() { errs <- in.Stop() }()
	}
	for range instances {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// replicaKeys starts two replicas of a Deployment and returns the key set each publishes, as
// sorted "kid x" strings. It also wants each replica to report the link-time version.
func replicaKeys(t *testing.T, s *manifest.Set, deployment string) [2][]string {
	t.Helper()
	var sets [2][]string
	var instances []*Instance
	t.Cleanup(func() { stopAll(t, instances) })
	for replica := range sets {
		in, err := Start(s, deployment, Options{Binary: binaries[deployment]})
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, in)
		if err := in.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		base, err := in.URL("http")
		if err != nil {
			t.Fatal(err)
		}
		var jwks struct {
			Keys []struct {
				Kid string `json:"kid"`
				X   string `json:"x"`
			} `json:"keys"`
		}
		if err := getJSON(base+"/.well-known/jwks.json", &jwks); err != nil {
			t.Fatal(err)
		}
		for _, k := range jwks.Keys {
			sets[replica] = append(sets[replica], k.Kid+" "+k.X)
		}
		slices.Sort(sets[replica])
		var doc struct {
			Info struct {
				Version string `json:"version"`
			} `json:"info"`
		}
		if err := getJSON(base+"/openapi.json", &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Info.Version != buildVersion {
			t.Errorf("replica %d: /openapi.json info.version = %q; want the link-time %q", replica, doc.Info.Version, buildVersion)
		}
	}
	return sets
}

// TestDevReplicasShareSigningKeys starts two replicas of each dev Deployment and wants both to
// publish the same key set, made of the keys in the dev Secret: a token one replica issues must
// verify on the other. It also reads the link-time version back from /openapi.json.
func TestDevReplicasShareSigningKeys(t *testing.T) {
	t.Parallel()
	o := loadOverlay(t, "dev")
	for _, d := range o.set.Deployments {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			var wantKids []string
			if v := manifest.Volume(&d.Spec.Template.Spec, "keys"); v != nil && v.Secret != nil {
				if sec := o.set.Secret(v.Secret.SecretName); sec != nil {
					for name := range sec.Data {
						wantKids = append(wantKids, strings.TrimSuffix(name, path.Ext(name)))
					}
				}
			}
			if len(wantKids) == 0 {
				t.Fatal("the dev Deployment mounts no rendered Secret of signing keys as volume keys")
			}
			slices.Sort(wantKids)
			sets := replicaKeys(t, o.set, d.Name)
			if !slices.Equal(sets[0], sets[1]) {
				t.Errorf("the replicas publish different keys: %v and %v", sets[0], sets[1])
			}
			var gotKids []string
			for _, k := range sets[0] {
				gotKids = append(gotKids, strings.Fields(k)[0])
			}
			if !slices.Equal(gotKids, wantKids) {
				t.Errorf("published kids %v; want the dev Secret's %v", gotKids, wantKids)
			}
		})
	}
}

// TestReplicasDisagreeWithoutTheSharedKey is the guard's own check: with YARDSTICK_KEYS_DIR gone
// from the dev manifest, each replica signs with its own ephemeral key and the key sets differ.
func TestReplicasDisagreeWithoutTheSharedKey(t *testing.T) {
	t.Parallel()
	o := loadOverlay(t, "dev")
	docs, err := yamledit.Mutate(o.docs, "Deployment", "scoring", func(obj map[string]any) error {
		c, err := yamledit.Container(obj)
		if err != nil {
			return err
		}
		env, _ := c["env"].([]any)
		kept := env[:0]
		for _, e := range env {
			if m, _ := e.(map[string]any); m["name"] != "YARDSTICK_KEYS_DIR" {
				kept = append(kept, e)
			}
		}
		c["env"] = kept
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := manifest.Decode(docs)
	if err != nil {
		t.Fatal(err)
	}
	sets := replicaKeys(t, s, "scoring")
	if len(sets[0]) == 0 || slices.Equal(sets[0], sets[1]) {
		t.Errorf("without the shared key the replicas publish %v and %v; want two different ephemeral keys", sets[0], sets[1])
	}
}
