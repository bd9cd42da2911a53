package manifest

import (
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NamedProbe is one probe of a container with the field it sits in.
type NamedProbe struct {
	Kind  string // startupProbe, readinessProbe or livenessProbe
	Probe *corev1.Probe
}

// Probes lists the probes a container declares, startup first, as the kubelet runs them.
func Probes(c *corev1.Container) []NamedProbe {
	var out []NamedProbe
	for _, p := range []NamedProbe{
		{"startupProbe", c.StartupProbe}, {"readinessProbe", c.ReadinessProbe}, {"livenessProbe", c.LivenessProbe},
	} {
		if p.Probe != nil {
			out = append(out, p)
		}
	}
	return out
}

// Volume is the pod volume called name, or nil.
func Volume(pod *corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

// MountFor finds the volume mount whose mountPath holds the absolute path p (the longest such
// mount path wins, as in the container's file system) and returns it with p's path below it.
func MountFor(c *corev1.Container, p string) (*corev1.VolumeMount, string, bool) {
	var best *corev1.VolumeMount
	var rest string
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mp := path.Clean(m.MountPath)
		rel, ok := below(mp, path.Clean(p))
		if ok && (best == nil || len(mp) > len(path.Clean(best.MountPath))) {
			best, rest = m, rel
		}
	}
	return best, rest, best != nil
}

// below reports whether p is dir or under it, and p's path relative to dir ("" for dir itself).
func below(dir, p string) (string, bool) {
	if p == dir {
		return "", true
	}
	if dir == "/" {
		return strings.TrimPrefix(p, "/"), true
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok
}

// checkMounts wants every mount backed by a declared volume, every ConfigMap and Secret a volume
// names to exist (rendered, or listed as created by the operator), no volume left unmounted, and
// every absolute path the container is given to lie on a mount — and, where the volume's source
// is rendered, to name a file it holds. kube-score has no check on volumes or mounts, and cannot
// know the objects the operator creates or the paths the binary is given.
func checkMounts(p *problems, obj string, s *Set, ns string, pod *corev1.PodSpec, c *corev1.Container, opts Options) {
	mounted := map[string]bool{}
	paths := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = true
		if paths[path.Clean(m.MountPath)] {
			p.add(obj, "mounts twice at %s", m.MountPath)
		}
		paths[path.Clean(m.MountPath)] = true
		if Volume(pod, m.Name) == nil {
			p.add(obj, "mounts volume %q, which the pod does not declare", m.Name)
		}
		if !m.ReadOnly {
			p.add(obj, "mount %s is not readOnly", m.MountPath)
		}
		if m.SubPath != "" || m.SubPathExpr != "" {
			p.add(obj, "mount %s uses subPath, which never sees ConfigMap or Secret updates", m.MountPath)
		}
	}
	for _, v := range pod.Volumes {
		if !mounted[v.Name] {
			p.add(obj, "volume %q is declared but not mounted", v.Name)
		}
		kind, name, optional := VolumeSource(&v)
		if kind == "" {
			continue
		}
		if optional {
			p.add(obj, "volume %q is optional: a missing %s %s would start the service without it", v.Name, kind, name)
		}
		if !s.hasSource(kind, name) && external(opts, kind, ns, name) == nil {
			p.add(obj, "volume %q names %s %q, which is neither rendered nor created by the operator", v.Name, kind, name)
		}
	}
	for _, e := range c.Env {
		if !strings.HasPrefix(e.Value, "/") {
			continue
		}
		m, rel, ok := MountFor(c, e.Value)
		if !ok {
			p.add(obj, "%s=%s is on no volume mount (the root file system is read-only and holds only the binary)", e.Name, e.Value)
			continue
		}
		v := Volume(pod, m.Name)
		if v == nil || rel == "" || strings.Contains(rel, "/") {
			continue
		}
		if keys, known := s.sourceKeys(v, ns, opts); known && !slices.Contains(keys, rel) {
			p.add(obj, "%s=%s names file %q, which volume %q does not hold (it holds %v)", e.Name, e.Value, rel, v.Name, keys)
		}
	}
}

// VolumeSource names the ConfigMap or Secret behind a volume ("" for other volume types).
func VolumeSource(v *corev1.Volume) (kind, name string, optional bool) {
	switch {
	case v.ConfigMap != nil:
		return "ConfigMap", v.ConfigMap.Name, v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
	case v.Secret != nil:
		return "Secret", v.Secret.SecretName, v.Secret.Optional != nil && *v.Secret.Optional
	}
	return "", "", false
}

func (s *Set) hasSource(kind, name string) bool {
	if kind == "ConfigMap" {
		return s.ConfigMap(name) != nil
	}
	return s.Secret(name) != nil
}

// external is the operator-created object of this kind, namespace and name, or nil.
func external(opts Options, kind, ns, name string) *Created {
	for i, c := range opts.External {
		if c.Kind == kind && c.Namespace == ns && c.Name == name {
			return &opts.External[i]
		}
	}
	return nil
}

// sourceKeys lists the file names a ConfigMap or Secret volume shows, when they are known: from
// the rendered object, or from the operator's documented command when it names every key.
func (s *Set) sourceKeys(v *corev1.Volume, ns string, opts Options) ([]string, bool) {
	kind, name, _ := VolumeSource(v)
	if kind != "" && !s.hasSource(kind, name) {
		e := external(opts, kind, ns, name)
		if e == nil || e.FromDir {
			return nil, false
		}
		return e.Keys, true
	}
	var keys []string
	var items []corev1.KeyToPath
	switch {
	case v.ConfigMap != nil:
		cm := s.ConfigMap(v.ConfigMap.Name)
		if cm == nil {
			return nil, false
		}
		for k := range cm.Data {
			keys = append(keys, k)
		}
		for k := range cm.BinaryData {
			keys = append(keys, k)
		}
		items = v.ConfigMap.Items
	case v.Secret != nil:
		sec := s.Secret(v.Secret.SecretName)
		if sec == nil {
			return nil, false
		}
		for k := range sec.Data {
			keys = append(keys, k)
		}
		for k := range sec.StringData {
			keys = append(keys, k)
		}
		items = v.Secret.Items
	default:
		return nil, false
	}
	if len(items) > 0 {
		keys = keys[:0]
		for _, it := range items {
			keys = append(keys, it.Path)
		}
	}
	slices.Sort(keys)
	return keys, true
}
