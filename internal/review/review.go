package review

import (
	"context"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fleetwright/fleetwright/internal/fleet"
	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/github"
	"github.com/fleetwright/fleetwright/internal/spec/load"
)

// Marker finds the comment again on every push.
const Marker = "<!-- fleetwright:review -->"

// GitHubLimit is the most characters a GitHub comment may hold.
const GitHubLimit = 65536

// Input is what the comment is built from.
type Input struct {
	// Base and Head are the rendered fleets (path → bytes) of the pull
	// request's base and head.
	Base, Head map[string][]byte
	// BaseRepo and HeadRepo are the loaded specs; HeadRepo draws the graphs.
	BaseRepo, HeadRepo *load.Repo
	// Limit caps the body (default GitHubLimit).
	Limit int
	// FullDiffHint tells readers where the whole diff is (the step summary,
	// an artifact).
	FullDiffHint string
	// BaseCommit and HeadCommit are the commits rendered; the comment
	// names them (short) at the top.
	BaseCommit, HeadCommit string
	// Charts, when set, renders the charts of the HelmReleases that
	// change, whose objects the comment then shows and judges like any
	// other (see Charts); nil shows HelmReleases as the fleet has them.
	Charts Charts
	// Preview, when set (the platform declares previews), is the
	// pull request's preview: the comment's Preview section
	// (PreviewSection), which render preview and the webhook keep up to
	// date, says it is deploying, or which apps are skipped.
	Preview *Preview
}

// Comment is the built review.
type Comment struct {
	Body     string
	FullDiff string   // every file's unified diff
	Danger   []string // one line per dangerous change
	Changed  []string // apps added, changed or removed (cluster/project/app)
	Cut      []string // objects whose diff did not fit
	Empty    bool     // the fleet does not change
}

type appChange struct {
	key     string // cluster/project/app
	status  string // added, changed, removed
	changes []fleet.Change
}

// Build writes the comment.
func Build(in Input) *Comment { return BuildContext(context.Background(), in) }

// BuildContext writes the comment; ctx bounds the fetching of charts.
func BuildContext(ctx context.Context, in Input) *Comment {
	limit := in.Limit
	if limit <= 0 {
		limit = GitHubLimit
	}
	changes := diffMaps(in.Base, in.Head)
	apps, baseFiles, headFiles := scope(changes, in.Base, in.Head)
	// The objects the changed HelmReleases' charts render join the fleets
	// as files, and everything below reads them like the fleet's own.
	notes := &chartNotes{}
	if in.Charts != nil && len(changes) > 0 {
		var added [2]map[string][]byte
		added, notes = renderCharts(ctx, in.Charts, [2]map[string][]byte{baseFiles, headFiles}, [2]map[string][]byte{in.Base, in.Head}, changes)
		if len(added[0])+len(added[1]) > 0 {
			in.Base, in.Head = maps.Clone(in.Base), maps.Clone(in.Head)
			maps.Copy(in.Base, added[0])
			maps.Copy(in.Head, added[1])
			changes = diffMaps(in.Base, in.Head)
			apps, baseFiles, headFiles = scope(changes, in.Base, in.Head)
		}
	}
	c := &Comment{Empty: len(changes) == 0}
	for _, a := range apps {
		c.Changed = append(c.Changed, a.key)
	}
	an := analyze(changes, apps, baseFiles, headFiles, in, notes, c)

	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("## fleetwright: what this change does to the fleet\n\n")
	writeCommits(&b, in.BaseCommit, in.HeadCommit)
	if in.Preview != nil {
		b.WriteString(github.Section(PreviewSection, PreviewContent(*in.Preview)) + "\n\n")
	}
	if c.Empty {
		b.WriteString("No fleet file changes.\n")
		c.Body = b.String()
		return c
	}
	if len(c.Danger) > 0 {
		b.WriteString("### ⚠️ Danger\n\n")
		for _, d := range c.Danger {
			b.WriteString("- " + d + "\n")
		}
		b.WriteString("\n")
	}
	writeSummary(&b, apps, an.baseObjs, an.headObjs, an.fx)
	notes.write(&b)
	an.fx.writeSources(&b, an.removedApps)
	writeEmptied(&b, changes)
	writeImages(&b, an.baseW, an.headW)
	writeResources(&b, an.baseObjs, an.headObjs)
	writeGraphs(&b, apps, in.HeadRepo)
	budget := limit - b.Len() - 600 // room for the cut note
	b.WriteString("### Changes\n\n")
	writeChanges(&b, c, changes, an, in, budget)
	c.Body = b.String()
	if len(c.Body) > limit { // the head alone is too long: cut it hard
		c.Body = c.Body[:limit-200] + "\n\n> ✂️ cut to fit GitHub's comment limit.\n"
	}
	return c
}

// scope returns the changed apps and the files to parse: objects of files
// that did not change are the same on both sides and cancel out of every
// section, except in the resource totals of a changed app, which count all
// of its workloads. So the changed files and the files of changed apps are
// read, not the whole fleet.
func scope(changes []fleet.Change, base, head map[string][]byte) (apps []*appChange, baseFiles, headFiles map[string][]byte) {
	apps = groupByApp(changes, base, head)
	changedFiles, changedApps := map[string]bool{}, map[string]bool{}
	for _, ch := range changes {
		changedFiles[ch.Path] = true
	}
	for _, a := range apps {
		changedApps[a.key] = true
	}
	pick := func(files map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for p, b := range files {
			if changedFiles[p] || changedApps[layout.AppOf(p)] {
				out[p] = b
			}
		}
		return out
	}
	return apps, pick(base), pick(head)
}

// analysis is what a review learned of both fleets: their objects (as
// Flux applies them, patches built), their workloads, and the Flux sources.
type analysis struct {
	removedApps        map[string]bool
	fx                 *fluxView
	baseObjs, headObjs map[string]object
	baseW, headW       map[string]object
	patched            patched
}

// analyze reads both fleets' objects and lists the change's dangers in c.
func analyze(changes []fleet.Change, apps []*appChange, baseFiles, headFiles map[string][]byte, in Input, notes *chartNotes, c *Comment) *analysis {
	an := &analysis{removedApps: map[string]bool{}}
	for _, a := range apps {
		if a.status == "removed" {
			an.removedApps[a.key] = true
		}
	}
	// The components' Flux sources: what Flux reconciles, and which
	// changes are consequences of others.
	fx := fluxSources(changes, in.Base, in.Head, an.removedApps)
	an.fx = fx
	an.baseObjs, an.headObjs = parseFleet(baseFiles, fx.read(0)), parseFleet(headFiles, fx.read(1))
	fx.addObjects(an.baseObjs, 0)
	fx.addObjects(an.headObjs, 1)
	// Folders with patches: what Flux applies is kustomize's build.
	changedDirs := map[string]bool{}
	for _, ch := range changes {
		changedDirs[path.Dir(ch.Path)] = true
	}
	applyPatches(baseFiles, an.baseObjs, changedDirs)
	an.patched = applyPatches(headFiles, an.headObjs, changedDirs)
	for _, dir := range an.patched.dirs {
		if e, ok := an.patched.errs[dir]; ok {
			c.Danger = append(c.Danger, fmt.Sprintf("%s does not build, so Flux cannot apply it: %s", code(dir+"/kustomization.yaml"), md(e)))
		}
	}
	c.Danger = append(c.Danger, tenancy(an.baseObjs, an.headObjs, in.Base, in.Head, fx.sources(), an.removedApps, notes.files)...)
	// Workloads by workloadKey, which pairs them across renames.
	an.baseW, an.headW = workloads(an.baseObjs), workloads(an.headObjs)
	c.Danger = append(c.Danger, dangers(apps, an.baseObjs, an.headObjs, an.baseW, an.headW, fx.removedOCI, fx.keptApps, fx.keptDirs)...)
	c.Danger = append(c.Danger, fx.danger...)
	c.Danger = append(c.Danger, splitClaims(an.baseObjs, an.headObjs)...)
	c.Danger = append(c.Danger, notes.danger...)
	c.FullDiff = fleet.Diff(changes, "")
	return an
}

// writeChanges writes each changed file's section, and after the last
// change of a folder with patches its patched objects as Flux applies
// them, within budget bytes; what does not fit is named in c.Cut.
func writeChanges(b *strings.Builder, c *Comment, changes []fleet.Change, an *analysis, in Input, budget int) {
	var hidden []string // files whose change is only a consequence shown above
	used := 0
	// After the last change of a folder with patches come its patched
	// objects as Flux applies them.
	last := map[string]int{}
	for i, ch := range changes {
		last[path.Dir(ch.Path)] = i
	}
	patchedIDs := map[string][]string{} // folder → ids of its patched objects
	for _, objs := range []map[string]object{an.baseObjs, an.headObjs} {
		for id, o := range objs {
			if d := path.Dir(o.File); o.Patched && !slices.Contains(patchedIDs[d], id) {
				patchedIDs[d] = append(patchedIDs[d], id)
			}
		}
	}
	full := false
	ix := newIndex(an.baseObjs, an.headObjs)
	// A file whose Flux objects moved to another is shown there, if
	// anything is left to show.
	movedTo := map[string]bool{}
	for to, from := range an.fx.movedFrom {
		movedTo[from] = string(an.fx.shown[to]) != string(in.Head[to])
	}
	for i, ch := range changes {
		verb := ""
		if shown, ok := an.fx.shown[ch.Path]; ok {
			if string(shown) == string(ch.New) {
				if !movedTo[ch.Path] {
					hidden = append(hidden, code(ch.Path))
				}
				continue
			}
			ch.Old = shown
			if from, ok := an.fx.movedFrom[ch.Path]; ok {
				ch.Op = fleet.Update
				verb = "moved from <code>" + html(from) + "</code>, changed"
			}
		}
		if full { // what does not fit is named, not built
			c.Cut = append(c.Cut, ch.Path)
			continue
		}
		secs := []string{section(ch, ix, verb)}
		names := []string{ch.Path}
		if dir := path.Dir(ch.Path); last[dir] == i {
			ids := patchedIDs[dir]
			slices.Sort(ids)
			for _, id := range ids {
				if sec := patchedSection(id, an.baseObjs, an.headObjs); sec != "" {
					secs = append(secs, sec)
					names = append(names, id+" (patched)")
				}
			}
		}
		for j, sec := range secs {
			if full || used+len(sec) > budget {
				full = true
				c.Cut = append(c.Cut, names[j])
				continue
			}
			used += len(sec)
			b.WriteString(sec)
		}
	}
	if len(hidden) > 0 {
		if len(hidden) > 5 {
			hidden = append(hidden[:5], fmt.Sprintf("%d more", len(hidden)-5))
		}
		fmt.Fprintf(b, "Not shown: %s, whose Flux objects change only as the Flux sources above say", strings.Join(hidden, ", "))
		if in.FullDiffHint != "" {
			b.WriteString(" (" + in.FullDiffHint + ")")
		}
		b.WriteString(".\n")
	}
	if len(c.Cut) > 0 {
		fmt.Fprintf(b, "\n> ✂️ %d more file(s) did not fit in this comment", len(c.Cut))
		if in.FullDiffHint != "" {
			b.WriteString("; " + in.FullDiffHint)
		}
		b.WriteString(".\n")
	}
}

func diffMaps(base, head map[string][]byte) []fleet.Change {
	var out []fleet.Change
	for p, nb := range head {
		ob, ok := base[p]
		switch {
		case !ok:
			out = append(out, fleet.Change{Path: p, Op: fleet.Add, New: nb})
		case string(ob) != string(nb):
			out = append(out, fleet.Change{Path: p, Op: fleet.Update, Old: ob, New: nb})
		}
	}
	for p, ob := range base {
		if _, ok := head[p]; !ok {
			out = append(out, fleet.Change{Path: p, Op: fleet.Delete, Old: ob})
		}
	}
	slices.SortFunc(out, func(a, b fleet.Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func groupByApp(changes []fleet.Change, base, head map[string][]byte) []*appChange {
	inBase, inHead := map[string]bool{}, map[string]bool{}
	for p := range base {
		if k := layout.AppOf(p); k != "" {
			inBase[k] = true
		}
	}
	for p := range head {
		if k := layout.AppOf(p); k != "" {
			inHead[k] = true
		}
	}
	byKey := map[string]*appChange{}
	for _, ch := range changes {
		k := layout.AppOf(ch.Path)
		if k == "" {
			continue
		}
		a := byKey[k]
		if a == nil {
			status := "changed"
			switch {
			case !inBase[k]:
				status = "added"
			case !inHead[k]:
				status = "removed"
			}
			a = &appChange{key: k, status: status}
			byKey[k] = a
		}
		a.changes = append(a.changes, ch)
	}
	var out []*appChange
	for _, a := range byKey {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *appChange) int { return strings.Compare(a.key, b.key) })
	return out
}

func writeSummary(b *strings.Builder, apps []*appChange, base, head map[string]object, fx *fluxView) {
	count := map[string]int{}
	for _, a := range apps {
		count[a.status]++
	}
	fmt.Fprintf(b, "**%d app(s) added, %d changed, %d removed.**\n\n", count["added"], count["changed"], count["removed"])
	fx.writeReconciled(b)
	if len(apps) > 0 {
		b.WriteString("| app | status | files |\n|---|---|---|\n")
		for _, a := range apps {
			fmt.Fprintf(b, "| %s | %s | %d |\n", cellCode(a.key), a.status, len(a.changes))
		}
	}
	kinds := map[string][3]int{} // added, changed, removed
	for id, o := range head {
		if fx.quiet[id] {
			continue
		}
		bo, ok := base[id]
		k := kinds[o.Kind]
		switch {
		case !ok:
			k[0]++
		case !reflect.DeepEqual(bo.Obj, o.Obj):
			k[1]++
		}
		kinds[o.Kind] = k
	}
	for id, o := range base {
		if _, ok := head[id]; !ok && !fx.quiet[id] {
			k := kinds[o.Kind]
			k[2]++
			kinds[o.Kind] = k
		}
	}
	var names []string
	for k, v := range kinds {
		if v != [3]int{} {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		if len(apps) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("| kind | added | changed | removed |\n|---|---|---|---|\n")
		for _, k := range names {
			v := kinds[k]
			fmt.Fprintf(b, "| %s | %d | %d | %d |\n", md(k), v[0], v[1], v[2])
		}
	}
	if len(apps) > 0 || len(names) > 0 {
		b.WriteString("\n")
	}
}

func containerImages(o object) map[string]string {
	out := map[string]string{}
	for _, c := range containersOf(o) {
		out[c.label()] = c.image
	}
	return out
}

// writeImages lists the images that change, of every container of every
// workload: init containers and sidecars too. A workload is paired across
// a rename or a change of kind (workloadKey), so a Job whose name changed
// with its template shows its image change on one row.
func writeImages(b *strings.Builder, bw, hw map[string]object) {
	type row struct{ what, old, new string }
	var rows []row
	// The workloads of several clusters (an app's environments) name
	// their cluster: their namespaces and names are the same.
	clusters := map[string]bool{}
	for _, ws := range []map[string]object{bw, hw} {
		for _, o := range ws {
			clusters[o.OnCluster()] = true
		}
	}
	for _, key := range unionKeys(bw, hw) {
		bo, bok := bw[key]
		ho, hok := hw[key]
		oldI, newI := map[string]string{}, map[string]string{}
		if bok {
			oldI = containerImages(bo)
		}
		if hok {
			newI = containerImages(ho)
		}
		o := ho
		if !hok {
			o = bo
		}
		what := o.Namespace + "/" + o.Name
		if o.Kind != "Deployment" {
			what = o.Kind + " " + what
		}
		if len(clusters) > 1 {
			what = o.OnCluster() + ": " + what
		}
		for _, name := range unionKeys(oldI, newI) {
			if oldI[name] != newI[name] {
				rows = append(rows, row{what + " (" + name + ")", orDash(oldI[name]), orDash(newI[name])})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("### Images\n\n| workload | before | after |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s |\n", cellCode(r.what), cellCode(r.old), cellCode(r.new))
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// requests returns the CPU and memory a workload reserves: the effective
// requests of its pod (containers, sidecars and init containers) times its
// replicas.
func requests(o object, all map[string]object) (cpu, mem resource.Quantity) {
	replicas := replicasOf(o, all)
	cpu, mem = podRequests(containersOf(o))
	cpu.SetMilli(cpu.MilliValue() * replicas)
	mem.Set(mem.Value() * replicas)
	return cpu, mem
}

// writeResources shows, per app whose totals change, the CPU and memory
// its long-running workloads request (× replicas) and, when any app holds
// some, the storage of its volume claims (a StatefulSet's claim templates
// × replicas, and PersistentVolumeClaims).
func writeResources(b *strings.Builder, base, head map[string]object) {
	type tot struct{ cpu, mem, disk [2]resource.Quantity }
	perApp := map[string]*tot{}
	add := func(objs map[string]object, i int) {
		for _, o := range objs {
			if !longRunning[o.Kind] && o.Kind != "PersistentVolumeClaim" {
				continue
			}
			key := o.Namespace + "/" + labelOf(o, layout.LabelApp)
			t := perApp[key]
			if t == nil {
				t = &tot{}
				perApp[key] = t
			}
			if longRunning[o.Kind] {
				c, m := requests(o, objs)
				t.cpu[i].Add(c)
				t.mem[i].Add(m)
			}
			t.disk[i].Add(storageOf(o, objs))
		}
	}
	add(base, 0)
	add(head, 1)
	var keys []string
	var total tot
	disk := false
	for k, t := range perApp {
		if t.cpu[0].Cmp(t.cpu[1]) != 0 || t.mem[0].Cmp(t.mem[1]) != 0 || t.disk[0].Cmp(t.disk[1]) != 0 {
			keys = append(keys, k)
			for i := range 2 {
				total.cpu[i].Add(t.cpu[i])
				total.mem[i].Add(t.mem[i])
				total.disk[i].Add(t.disk[i])
			}
			disk = disk || !t.disk[0].IsZero() || !t.disk[1].IsZero()
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	b.WriteString("### Resource requests (× replicas)\n\n| app | CPU | memory |")
	if disk {
		b.WriteString(" storage |\n|---|---|---|---|\n")
	} else {
		b.WriteString("\n|---|---|---|\n")
	}
	row := func(name string, t *tot) {
		fmt.Fprintf(b, "| %s | %s → %s (%s) | %s → %s (%s) |", name,
			cpuStr(t.cpu[0]), cpuStr(t.cpu[1]), delta(t.cpu, cpuStr),
			memStr(t.mem[0]), memStr(t.mem[1]), delta(t.mem, memStr))
		if disk {
			fmt.Fprintf(b, " %s → %s (%s) |", diskStr(t.disk[0]), diskStr(t.disk[1]), delta(t.disk, diskStr))
		}
		b.WriteString("\n")
	}
	for _, k := range keys {
		row(cellCode(k), perApp[k])
	}
	row("**total**", &total)
	b.WriteString("\n")
}

func cpuStr(q resource.Quantity) string { return fmt.Sprintf("%dm", q.MilliValue()) }

func memStr(q resource.Quantity) string { return fmt.Sprintf("%dMi", q.Value()/(1<<20)) }

// diskStr shows storage in Gi, with a decimal when it is not whole.
func diskStr(q resource.Quantity) string {
	if v := q.Value(); v%(1<<30) != 0 {
		return strconv.FormatFloat(float64(v)/(1<<30), 'f', 2, 64) + "Gi"
	}
	return fmt.Sprintf("%dGi", q.Value()/(1<<30))
}

func delta(q [2]resource.Quantity, f func(resource.Quantity) string) string {
	d := q[1].DeepCopy()
	d.Sub(q[0])
	if d.Sign() >= 0 {
		return "+" + f(d)
	}
	neg := d.DeepCopy()
	neg.Neg()
	return "-" + f(neg)
}

// unionKeys returns the keys of both maps, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	set := make(map[string]bool, len(a)+len(b))
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// section is the collapsible diff of one file: a ConfigMap's files and a
// kustomization's patches as the text they hold, anything else as the
// file's unified diff. verb says what happens to the file ("" for what
// its change says).
func section(ch fleet.Change, ix *index, verb string) string {
	title := ch.Path
	bo, bok := ix.fileObject(ch.Path, 0)
	ho, hok := ix.fileObject(ch.Path, 1)
	single := !strings.Contains(string(ch.New)+string(ch.Old), "\n---\n")
	switch {
	case single && hok:
		title = ho.label()
	case single && bok:
		title = bo.label()
	}
	if verb == "" {
		verb = map[fleet.Op]string{fleet.Add: "added", fleet.Update: "changed", fleet.Delete: "removed"}[ch.Op]
	}
	d := ""
	switch {
	case !single:
	case path.Base(ch.Path) == "kustomization.yaml":
		d = kustomizationDiff(ch)
	case (bok || hok) && (!bok || bo.Kind == "ConfigMap" && !bo.Patched) && (!hok || ho.Kind == "ConfigMap" && !ho.Patched):
		var bp, hp *object
		cm := ho
		if bok {
			bp = &bo
		}
		if hok {
			hp = &ho
		} else {
			cm = bo
		}
		d = configMapDiff(ch, bp, hp, ix.mountPaths(cm))
	}
	if d == "" {
		d = fleet.FileDiff(ch, "")
	}
	return details(verb+" —", title, ch.Path, d)
}

// PreviewSection is the name of the comment's section (github.Section)
// that tells how the pull request's preview is: Build writes it first
// when the platform declares previews, render preview and the webhook
// keep it up to date.
const PreviewSection = "preview"
