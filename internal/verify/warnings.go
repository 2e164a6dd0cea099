package verify

import (
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
)

// The API server answers some requests with warnings (a deprecated API
// version, a field it ignores, an unusual value): kubectl prints them, and
// so does verify, as a warning finding on the object whose dry-run got
// them. A router set on the client's configuration hands each warning to
// the collector the request's context carries.

type warningsKey struct{}

// serverWarnings collects the warnings of one object's requests.
type serverWarnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *serverWarnings) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Contains(w.texts, text) {
		w.texts = append(w.texts, text)
	}
}

func (w *serverWarnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.texts)
}

// collectWarnings returns a context whose requests' warnings go to the
// returned collector.
func collectWarnings(ctx context.Context) (context.Context, *serverWarnings) {
	w := &serverWarnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

// warningRouter implements rest.WarningHandlerWithContext.
type warningRouter struct{ log *slog.Logger }

func (h warningRouter) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	if w, ok := ctx.Value(warningsKey{}).(*serverWarnings); ok {
		w.add(text)
		return
	}
	h.log.Warn("the cluster warns", "warning", text)
}

// fluxFinalizerWarning starts the warning the API server gives for Flux's
// finalizer, which is not a domain-qualified name with a path. Flux's
// controllers write it into each of their objects, and render writes it
// into the ones it generates (see the generate package): nobody but Flux
// can rename it, so verify does not report it.
var fluxFinalizerWarning = "metadata.finalizers: " + strconv.Quote(kustomizev1.KustomizationFinalizer) + ":"

// warningFindings turns an object's warnings into findings, each at the
// field it names when it starts with one ("spec.x: ...").
func (lc *liveChecker) warningFindings(o *object, w *serverWarnings) []Finding {
	var out []Finding
	for _, text := range w.list() {
		if strings.HasPrefix(text, fluxFinalizerWarning) {
			continue
		}
		out = append(out, lc.r.finding(o, CheckDryRun, SeverityWarning, warningField(text), "the cluster warns: "+text))
	}
	return out
}

// warningField is the field path a warning starts with, if any: the API
// server writes field warnings as "<path>: <message>", a map's key in
// brackets (metadata.annotations[example.com/x]), which verify's paths
// write as a field (metadata.annotations.example.com/x).
func warningField(text string) string {
	p, _, ok := strings.Cut(text, ": ")
	if !ok || p == "" || strings.ContainsAny(p, " \"'") || !strings.Contains(p, ".") {
		return ""
	}
	return mapKeyRE.ReplaceAllString(p, ".$1")
}

// mapKeyRE matches a bracketed map key; a list index is all digits.
var mapKeyRE = regexp.MustCompile(`\[([^\]]*[^\]0-9][^\]]*)\]`)
