package validate

import (
	"path"
	"slices"
	"strings"

	"github.com/fleetwright/fleetwright/internal/secretscan"
	"github.com/fleetwright/fleetwright/internal/spec"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// checkMounts checks the paths the workload's container mounts: each once,
// volumes mounted somewhere, and nothing mounted inside a file.
func checkMounts(doc *load.Document, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) {
	mounts := map[string]load.Path{}
	mount := func(p string, where load.Path) {
		if p == "" {
			return
		}
		p = path.Clean(p)
		if prev, dup := mounts[p]; dup {
			ps.Add(doc, where, "%s is already mounted in this container (%s); mount each path once", p, shortPath(prev))
			return
		}
		mounts[p] = where
	}
	for i, v := range w.Volumes {
		if v.MountPath != "" {
			va := at.Child("volumes").Child(i).Child("mount_path")
			if checkMountPath(doc, va, v.MountPath, ps) {
				mount(v.MountPath, va)
			}
		}
	}
	for i, v := range w.Volumes {
		if v.MountPath != "" || v.Name == "" {
			continue
		}
		used := false
		for _, k := range slices.Concat(w.InitContainers, w.Sidecars) {
			used = used || slices.ContainsFunc(k.VolumeMounts, func(m spec.VolumeMount) bool { return m.Name == v.Name })
		}
		if !used {
			ps.Warn(doc, at.Child("volumes").Child(i), "volume %q is mounted nowhere: give it mount_path, or mount it in an init container or sidecar", v.Name)
		}
	}
	checkFiles(doc, w, at, mount, ps)
	// A file is mounted as a file: nothing can be mounted inside it.
	for i, f := range w.Files {
		if f.Path == "" || !strings.HasPrefix(f.Path, "/") {
			continue
		}
		fp := path.Clean(f.Path)
		for p, where := range mounts {
			if strings.HasPrefix(p, fp+"/") {
				ps.Add(doc, where, "%s is inside %s, which files[%d] mounts as a file", p, fp, i)
			}
		}
	}

}

// checkMountPath checks a container path; false means it is not usable.
func checkMountPath(doc *load.Document, at load.Path, p string, ps *load.Problems) bool {
	switch {
	case !strings.HasPrefix(p, "/"):
		ps.Add(doc, at, "%q must be an absolute path, such as /var/lib/data", p)
	case p == "/":
		ps.Add(doc, at, "cannot mount over the container's root")
	case slices.Contains(strings.Split(p, "/"), ".."):
		ps.Add(doc, at, "%q must not contain ..", p)
	default:
		return true
	}
	return false
}

func checkSubPath(doc *load.Document, at load.Path, p string, ps *load.Problems) {
	if p != "" && (path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..")) {
		ps.Add(doc, at, "%q must be a relative path inside the volume, without ..", p)
	}
}

// checkVolumes checks the volumes of a component and returns their names.
func (l *checker) checkVolumes(doc *load.Document, c *spec.Component, w *spec.WorkloadSpec, at load.Path, ps *load.Problems) map[string]bool {
	names := map[string]bool{}
	seen := map[string]int{}
	for i, v := range w.Volumes {
		va := at.Child("volumes").Child(i)
		if v.Name != "" {
			if j, dup := seen[v.Name]; dup {
				ps.Add(doc, va.Child("name"), "volume %q is declared twice (also volumes[%d])", v.Name, j)
			} else {
				seen[v.Name] = i
			}
			if m := load.CheckNamespace(v.Name); m != "" {
				ps.Add(doc, va.Child("name"), "%s", m)
			} else if strings.HasPrefix(v.Name, "fleetwright-") {
				ps.Add(doc, va.Child("name"), "volume names starting with fleetwright- are reserved for the volumes fleetwright adds (its files)")
			}
			names[v.Name] = true
		}
		n := countSet(v.Size != nil, v.Shared != "", v.Claim != "", v.EmptyDir != nil, v.Secret != nil, v.ConfigMap != nil)
		switch {
		case n == 0:
			ps.Add(doc, va, "volume %q needs one of size (persistent), shared, claim, empty_dir, secret or config_map", v.Name)
		case n > 1:
			ps.Add(doc, va, "volume %q takes one of size (persistent), shared, claim, empty_dir, secret or config_map, not %d", v.Name, n)
		}
		if v.Claim != "" && !load.IsSubdomain(v.Claim) {
			ps.Add(doc, va.Child("claim"), "%q is not a valid PersistentVolumeClaim name", v.Claim)
		}
		if v.Size == nil {
			for _, f := range []struct {
				set   bool
				field string
			}{{v.Retain != nil, "retain"}, {v.StorageClass != "", "storage_class"}, {len(v.AccessModes) > 0, "access_modes"}} {
				switch {
				case f.set && v.Shared != "":
					ps.AddKey(doc, va.Child(f.field), "%s of a shared volume is set on the app's volume %s", f.field, v.Shared)
				case f.set:
					ps.AddKey(doc, va.Child(f.field), "%s is for a persistent volume (one with size)", f.field)
				}
			}
		} else {
			if q, err := v.Size.Parse(); err != nil {
				ps.Add(doc, va.Child("size"), "%q is not a quantity (such as 10Gi)", v.Size.String())
			} else if q.Sign() <= 0 {
				ps.Add(doc, va.Child("size"), "must be more than 0")
			}
			if c.Type != spec.TypeWorkload {
				ps.AddKey(doc, va.Child("size"), "a %s cannot have a persistent volume: claims per replica are a StatefulSet's; use empty_dir, or a workload", c.Type)
			}
			if v.StorageClass != "" && !load.IsSubdomain(v.StorageClass) {
				ps.Add(doc, va.Child("storage_class"), "%q is not a valid StorageClass name", v.StorageClass)
			}
			for k, m := range v.AccessModes {
				if slices.Index(v.AccessModes, m) < k {
					ps.Add(doc, va.Child("access_modes").Child(k), "%s is listed twice", m)
				}
			}
		}
		if e := v.EmptyDir; e != nil && e.SizeLimit != nil {
			if q, err := e.SizeLimit.Parse(); err != nil {
				ps.Add(doc, va.Child("empty_dir").Child("size_limit"), "%q is not a quantity (such as 64Mi)", e.SizeLimit.String())
			} else if q.Sign() <= 0 {
				ps.Add(doc, va.Child("empty_dir").Child("size_limit"), "must be more than 0")
			}
		}
		if s := v.Secret; s != nil {
			if s.Name != "" && !load.IsSubdomain(s.Name) {
				ps.Add(doc, va.Child("secret").Child("name"), "%q is not a valid Secret name", s.Name)
			}
			checkKeyPaths(doc, s.Items, va.Child("secret").Child("items"), ps)
		}
		if s := v.ConfigMap; s != nil {
			if s.Name != "" && !load.IsSubdomain(s.Name) {
				ps.Add(doc, va.Child("config_map").Child("name"), "%q is not a valid ConfigMap name", s.Name)
			}
			checkKeyPaths(doc, s.Items, va.Child("config_map").Child("items"), ps)
		}
		checkSubPath(doc, va.Child("sub_path"), v.SubPath, ps)
		if v.SubPath != "" && v.MountPath == "" {
			ps.AddKey(doc, va.Child("sub_path"), "sub_path applies to mount_path, which is not set")
		}
	}
	return names
}

func checkKeyPaths(doc *load.Document, items []spec.KeyPath, at load.Path, ps *load.Problems) {
	seen := map[string]bool{}
	for i, it := range items {
		if it.Key != "" && !load.SecretKey.MatchString(it.Key) {
			ps.Add(doc, at.Child(i).Child("key"), "%q is not a valid key", it.Key)
		}
		if it.Path != "" {
			if path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
				ps.Add(doc, at.Child(i).Child("path"), "%q must be a relative path without ..", it.Path)
			} else if seen[it.Path] {
				ps.Add(doc, at.Child(i).Child("path"), "%q is used twice", it.Path)
			}
			seen[it.Path] = true
		}
	}
}

// checkFiles checks config files: one of content and from each, absolute
// paths mounted once, a size the ConfigMap holds, no credentials.
func checkFiles(doc *load.Document, w *spec.WorkloadSpec, at load.Path, mount func(string, load.Path), ps *load.Problems) {
	total := 0
	for i, f := range w.Files {
		fa := at.Child("files").Child(i)
		switch {
		case f.Content != nil && f.From != "":
			ps.Add(doc, fa, "file %s takes one of content or from, not both", f.Path)
		case f.Content == nil && f.From == "" && !doc.Has(fa.Child("content")):
			ps.Add(doc, fa, "file %s needs content, or from (a file beside app.yaml)", f.Path)
		}
		if f.Path != "" {
			switch {
			case !strings.HasPrefix(f.Path, "/"):
				// the schema's pattern says it
			case strings.HasSuffix(f.Path, "/") || path.Clean(f.Path) != f.Path:
				ps.Add(doc, fa.Child("path"), "%q must be a clean path to a file, such as %s", f.Path, strings.TrimSuffix(path.Clean(f.Path), "/"))
			default:
				mount(f.Path, fa.Child("path"))
			}
		}
		if f.Content != nil {
			total += len(*f.Content)
			if m := load.ContentSecret(*f.Content); m != "" {
				ps.Add(doc, fa.Child("content"), "%s", m)
			}
		}
		if f.Path != "" && (f.Content != nil || f.From != "") && secretscan.IsCredentialName(path.Base(f.Path)) {
			ps.Add(doc, fa.Child("path"), "file %s looks like a credential, and files are kept in Git; mount it from a Secret (volumes: [{…, secret: {name: <secret>}}]) instead", path.Base(f.Path))
		}
	}
	if total > load.MaxComponentFiles {
		ps.AddKey(doc, at.Child("files"), "the files hold %d bytes together; their ConfigMap holds at most about 1 MiB: mount big files from a volume", total)
	}
}
