package tie

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
)

// Operator holds the files of ConfigMaps and Secrets created outside the manifests (prod), keyed
// by "<Kind>/<name>" and then by file name.
type Operator map[string]map[string][]byte

// sourceFiles is the data a ConfigMap or Secret volume shows: from the rendered object, else from
// the operator's.
func sourceFiles(s *manifest.Set, op Operator, v *corev1.Volume) (map[string][]byte, error) {
	kind, name, _ := manifest.VolumeSource(v)
	files := map[string][]byte{}
	switch {
	case kind == "ConfigMap" && s.ConfigMap(name) != nil:
		cm := s.ConfigMap(name)
		for k, val := range cm.Data {
			files[k] = []byte(val)
		}
		for k, val := range cm.BinaryData {
			files[k] = val
		}
	case kind == "Secret" && s.Secret(name) != nil:
		sec := s.Secret(name)
		for k, val := range sec.Data {
			files[k] = val
		}
		for k, val := range sec.StringData {
			files[k] = []byte(val)
		}
	case op[kind+"/"+name] != nil:
		for k, val := range op[kind+"/"+name] {
			files[k] = val
		}
	default:
		return nil, fmt.Errorf("volume %q: %s %q is neither rendered nor supplied by the operator", v.Name, kind, name)
	}
	items := itemsOf(v)
	if len(items) == 0 {
		return files, nil
	}
	projected := map[string][]byte{}
	for _, it := range items {
		b, ok := files[it.Key]
		if !ok {
			return nil, fmt.Errorf("volume %q: item key %q is not in %s %s", v.Name, it.Key, kind, name)
		}
		projected[it.Path] = b
	}
	return projected, nil
}

func itemsOf(v *corev1.Volume) []corev1.KeyToPath {
	switch {
	case v.ConfigMap != nil:
		return v.ConfigMap.Items
	case v.Secret != nil:
		return v.Secret.Items
	}
	return nil
}

// writeVolume lays files out in dir as the kubelet's atomic writer does for ConfigMap and Secret
// volumes: the files live in a timestamped directory, ..data links to it, and each top-level name
// is a link through ..data. Readers that mishandle links or the dot-entries fail here as they
// would in a pod.
func writeVolume(dir string, files map[string][]byte) error {
	const stamp = "..2026_01_01_00_00_00.000000001"
	names := make([]string, 0, len(files))
	for name := range files {
		if name == "" || path.IsAbs(name) || strings.HasPrefix(path.Clean(name), "..") {
			return fmt.Errorf("file name %q cannot be projected", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	top := map[string]bool{}
	for _, name := range names {
		p := filepath.Join(dir, stamp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[name], 0o444); err != nil {
			return err
		}
		top[strings.SplitN(name, "/", 2)[0]] = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(stamp, filepath.Join(dir, "..data")); err != nil {
		return err
	}
	for name := range top {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// mountVolumes materializes every volume the container mounts under root and returns the host
// directory standing in for each mount path.
func mountVolumes(root string, s *manifest.Set, op Operator, pod *corev1.PodSpec, c *corev1.Container) (map[string]string, error) {
	mounts := map[string]string{}
	for i, m := range c.VolumeMounts {
		v := manifest.Volume(pod, m.Name)
		if v == nil {
			return nil, fmt.Errorf("mount %s: the pod declares no volume %q", m.MountPath, m.Name)
		}
		if m.SubPath != "" || m.SubPathExpr != "" {
			return nil, fmt.Errorf("mount %s: subPath mounts are not reproduced", m.MountPath)
		}
		dir := filepath.Join(root, fmt.Sprintf("mount%d-%s", i, m.Name))
		switch {
		case v.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		case v.ConfigMap != nil || v.Secret != nil:
			files, err := sourceFiles(s, op, v)
			if err != nil {
				return nil, err
			}
			if err := writeVolume(dir, files); err != nil {
				return nil, fmt.Errorf("volume %q: %w", v.Name, err)
			}
		default:
			return nil, fmt.Errorf("volume %q: only configMap, secret and emptyDir volumes are reproduced", v.Name)
		}
		mounts[path.Clean(m.MountPath)] = dir
	}
	return mounts, nil
}

// hostPath maps a container path onto the host directories standing in for its mounts (the
// longest mount path wins); paths on no mount are returned unchanged, so the binary sees the same
// absence it would see in the container.
func hostPath(c *corev1.Container, mounts map[string]string, p string) string {
	m, rel, ok := manifest.MountFor(c, p)
	if !ok {
		return p
	}
	dir := mounts[path.Clean(m.MountPath)]
	if rel == "" {
		return dir
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}
