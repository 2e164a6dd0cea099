package webhook

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	"github.com/fleetwright/fleetwright/internal/probe"
	"github.com/fleetwright/fleetwright/internal/store"
)

// overviewFilter is what the overview's form and links ask for.
type overviewFilter struct {
	Project, Cluster, Phase, Q string
	Page                       int
}

func parseOverviewFilter(q url.Values) overviewFilter {
	f := overviewFilter{Project: q.Get("project"), Cluster: q.Get("cluster"), Phase: q.Get("phase"), Q: strings.TrimSpace(q.Get("q")), Page: 1}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		f.Page = n
	}
	return f
}

// url returns the overview's address with f's filters, changed by edit.
func (f overviewFilter) url(edit func(*overviewFilter)) string {
	g := f
	if edit != nil {
		edit(&g)
	}
	q := url.Values{}
	for k, v := range map[string]string{"project": g.Project, "cluster": g.Cluster, "phase": g.Phase, "q": g.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if g.Page > 1 {
		q.Set("page", strconv.Itoa(g.Page))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// phaseChip is one phase filter with the number of apps in it.
type phaseChip struct {
	Phase    string
	Count    int
	Selected bool
	URL      string
}

// overviewRow is one app of the overview.
type overviewRow struct {
	layout.AppRef
	Cluster        string
	Phase          store.Phase
	Badge          badgeView
	Message        string
	URL            string
	Revision, Spec revLink
	// LiveURL is set only while the reachability check passes.
	LiveURL string
	// TLSDays is the fewest days to expiry of the app's certificates, when
	// the reachability check saw one; TLSWarn when one has a warning.
	TLSDays int
	HasTLS  bool
	TLSWarn bool
	Updated string
}

type overviewView struct {
	pageBase
	Filter    overviewFilter
	Projects  []string
	Phases    []phaseChip
	AllURL    string
	Rows      []overviewRow
	Total     int
	Apps      int
	From, To  int
	Page      int
	Pages     int
	PrevURL   string
	NextURL   string
	FilterSet bool
}

// phaseOrder lists the phases as the overview's chips show them.
var phaseOrder = []store.Phase{store.PhaseFailed, store.PhaseDegraded, store.PhaseDeploying, store.PhasePending,
	store.PhaseRunning, store.PhasePaused, store.PhaseDeleted}

func (s *Server) handleOverview(w http.ResponseWriter, r *http.Request) {
	v, err := s.overview(r, parseOverviewFilter(r.URL.Query()))
	if err != nil {
		s.log.Error("reading the history store", "err", err)
		plainError(w, http.StatusInternalServerError, "Reading the history store failed.")
		return
	}
	s.render(w, http.StatusOK, "overview", v)
}

// overview builds the overview of the apps the visitor may see: they are
// filtered in memory (the apps table holds one row per app), and only the
// page shown reads its deployment's checks.
func (s *Server) overview(r *http.Request, f overviewFilter) (overviewView, error) {
	ctx := r.Context()
	seq, err := s.cfg.Store.LatestSeq(ctx)
	if err != nil {
		return overviewView{}, err
	}
	apps, err := s.cfg.Store.Apps(ctx)
	if err != nil {
		return overviewView{}, err
	}
	// Only what the visitor may see exists for them: the rows, the
	// counts, the projects of the filter.
	g := visitorFrom(r).grant
	apps = slices.DeleteFunc(apps, func(a store.App) bool { return !g.allows(a.Project) })
	cluster := s.pages.cfg.ClusterName
	v := overviewView{pageBase: s.base(r, "Apps"), Filter: f, Apps: len(apps),
		FilterSet: f.Project != "" || f.Cluster != "" || f.Phase != "" || f.Q != ""}
	v.Stream, v.Seq = "/ui/stream", seq
	q := strings.ToLower(f.Q)
	counts := map[store.Phase]int{}
	var rows []store.App
	for _, a := range apps {
		if len(v.Projects) == 0 || v.Projects[len(v.Projects)-1] != a.Project {
			v.Projects = append(v.Projects, a.Project)
		}
		if (f.Project != "" && a.Project != f.Project) || (f.Cluster != "" && f.Cluster != cluster) ||
			(q != "" && !strings.Contains(strings.ToLower(a.Name), q) && !strings.Contains(strings.ToLower(a.Ref()), q)) {
			continue
		}
		counts[a.Phase]++
		if f.Phase != "" && string(a.Phase) != f.Phase {
			continue
		}
		rows = append(rows, a)
	}
	for _, ph := range phaseOrder {
		v.Phases = append(v.Phases, phaseChip{Phase: string(ph), Count: counts[ph], Selected: f.Phase == string(ph),
			URL: f.url(func(g *overviewFilter) { g.Phase, g.Page = string(ph), 1 })})
	}
	v.AllURL = f.url(func(g *overviewFilter) { g.Phase, g.Page = "", 1 })
	size := s.pages.cfg.PageSize
	v.Total = len(rows)
	v.Pages = max(1, (len(rows)+size-1)/size)
	v.Page = min(f.Page, v.Pages)
	lo, hi := (v.Page-1)*size, min(v.Page*size, len(rows))
	if v.Page > 1 {
		v.PrevURL = f.url(func(g *overviewFilter) { g.Page = v.Page - 1 })
	}
	if v.Page < v.Pages {
		v.NextURL = f.url(func(g *overviewFilter) { g.Page = v.Page + 1 })
	}
	if len(rows) > 0 {
		v.From, v.To = lo+1, hi
	}
	for _, a := range rows[lo:hi] {
		row := overviewRow{AppRef: a.AppRef, Cluster: cmpOr(a.Environment, cluster), Phase: a.Phase, Message: a.Message,
			URL:      envAppURL(a, ""),
			Revision: linkRevision(s.pages.cfg.FleetRepoURL, a.Revision), Spec: linkRevision(s.pages.cfg.AppsRepoURL, a.SpecRevision),
			Updated: fmtTime(a.UpdatedAt)}
		d, err := s.cfg.Store.Deployment(ctx, a.DeploymentID)
		if err != nil {
			return overviewView{}, err
		}
		res := decodeResult(d)
		row.Badge = phaseBadge(a.Phase, res, true)
		row.LiveURL = liveURL(d, res)
		if days, warn := tlsDays(res); days != nil {
			row.TLSDays, row.HasTLS, row.TLSWarn = *days, true, warn
		}
		v.Rows = append(v.Rows, row)
	}
	slices.Sort(v.Projects)
	v.Projects = slices.Compact(v.Projects)
	return v, nil
}

// appPageURL is the page of an app, /apps/{project}/{name}.
func appPageURL(app layout.AppRef) string {
	return "/apps/" + url.PathEscape(app.Project) + "/" + url.PathEscape(app.Name)
}

// liveURL is the deployment's live URL while its reachability check passes
// and the app is not deleted: the link appears only once the app answers.
func liveURL(d store.Deployment, res probe.Result) string {
	if d.LiveURL == "" || d.Phase == store.PhaseDeleted || res.Check(probe.CheckReachability).State != probe.StatePassed {
		return ""
	}
	return d.LiveURL
}

// tlsDays returns the fewest days to expiry of the certificates the
// reachability check saw, and whether any has a warning or failed to verify.
func tlsDays(res probe.Result) (*int, bool) {
	var (
		days *int
		warn bool
	)
	for _, e := range res.Check(probe.CheckReachability).Endpoints {
		if e.TLS == nil {
			continue
		}
		if days == nil || e.TLS.DaysToExpiry < *days {
			n := e.TLS.DaysToExpiry
			days = &n
		}
		warn = warn || e.TLS.Warning != "" || !e.TLS.Verified
	}
	return days, warn
}
