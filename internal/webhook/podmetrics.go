package webhook

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Prices price the resources an app requests, per hour: platform.yaml's
// prices (docs/webhook.md, "Metrics and cost").
type Prices struct {
	// CPUHour is the price of one requested CPU core for an hour.
	CPUHour float64
	// MemoryGiBHour is the price of one requested GiB of memory for an hour.
	MemoryGiBHour float64
	// Currency, when set, is shown after each price.
	Currency string
}

// Set reports whether any price is given.
func (p Prices) Set() bool { return p.CPUHour > 0 || p.MemoryGiBHour > 0 }

// hoursPerMonth is the month the pages price: 30 days.
const hoursPerMonth = 30 * 24

const gib = 1 << 30

// resourceUse is requested or used CPU (millicores) and memory (bytes).
type resourceUse struct {
	CPUMilli int64
	MemBytes int64
}

func (r *resourceUse) add(l corev1.ResourceList, times int64) {
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.CPUMilli += q.MilliValue() * times
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.MemBytes += q.Value() * times
	}
}

// hourly is the price of r for one hour.
func (p Prices) hourly(r resourceUse) float64 {
	return float64(r.CPUMilli)/1000*p.CPUHour + float64(r.MemBytes)/gib*p.MemoryGiBHour
}

// usageRow is one component's requests, use and cost, as the app page
// shows them.
type usageRow struct {
	Component string
	// Replicas is the workloads' spec.replicas; Pods the pods the metrics
	// API reported.
	Replicas        int64
	Pods            int
	Requested, Used resourceUse
	HasUse          bool
	PerHour         string
	PerMonth        string
}

// usageCellsView is one row of the usage table with its table.
type usageCellsView struct {
	View *usageView
	Row  usageRow
}

// usageView is the app's resources on one cluster (an environment).
type usageView struct {
	Cluster string
	Rows    []usageRow
	Total   usageRow
	// NoMetrics: the cluster serves no metrics.k8s.io; MetricsError: it
	// did not answer.
	NoMetrics     bool
	MetricsError  string
	RequestsError string
	Priced        bool
	Prices        Prices
}

// usage fills the app's requested resources (from its Deployments and
// StatefulSets: the containers' requests times the replicas), their price,
// and the use the metrics API reports for its pods. A cluster that cannot
// answer leaves a message, not an error.
//
// cl is the cluster of the app's environment (clusterOf), with a Kube.
func (s *Server) usage(ctx context.Context, v *appView, cl *clusterClients) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	app := v.App.Name
	ns := appNamespace(v.App.Project, v.App.Environment)
	prices := s.pages.cfg.Prices
	u := &usageView{Cluster: cl.name, Priced: prices.Set(), Prices: prices}
	v.Usage = u
	rows := map[string]*usageRow{}
	row := func(c string) *usageRow {
		if rows[c] == nil {
			rows[c] = &usageRow{Component: c}
		}
		return rows[c]
	}
	sel := metav1.ListOptions{LabelSelector: appSelector(v.App.AppRef)}
	requests := func(comp string, replicas *int32, spec corev1.PodSpec) {
		n := int64(1)
		if replicas != nil {
			n = int64(*replicas)
		}
		r := row(comp)
		r.Replicas += n
		for _, c := range spec.Containers {
			r.Requested.add(c.Resources.Requests, n)
		}
	}
	deps, err := cl.kube.AppsV1().Deployments(ns).List(ctx, sel)
	if err == nil {
		for _, d := range deps.Items {
			requests(componentOf(d.ObjectMeta, app), d.Spec.Replicas, d.Spec.Template.Spec)
		}
		var sts *appsv1.StatefulSetList
		if sts, err = cl.kube.AppsV1().StatefulSets(ns).List(ctx, sel); err == nil {
			for _, st := range sts.Items {
				requests(componentOf(st.ObjectMeta, app), st.Spec.Replicas, st.Spec.Template.Spec)
			}
		}
	}
	if err != nil {
		u.RequestsError = "The workloads are not available from the cluster: " + err.Error()
	}
	switch {
	case cl.metrics == nil:
		u.NoMetrics = true
	default:
		pms, err := cl.metrics.MetricsV1beta1().PodMetricses(ns).List(ctx, sel)
		switch {
		case apierrors.IsNotFound(err):
			// The API server serves no metrics.k8s.io (a missing pod
			// answers an empty list, not 404).
			u.NoMetrics = true
		case err != nil:
			u.MetricsError = "The metrics API did not answer: " + err.Error()
		default:
			for _, pm := range pms.Items {
				r := row(cmp.Or(pm.Labels[layout.LabelComponent], "—"))
				r.Pods++
				r.HasUse = true
				for _, c := range pm.Containers {
					r.Used.add(c.Usage, 1)
				}
			}
		}
	}
	for _, c := range slices.Sorted(maps.Keys(rows)) {
		r := *rows[c]
		t := &u.Total
		t.Replicas += r.Replicas
		t.Pods += r.Pods
		t.Requested.CPUMilli += r.Requested.CPUMilli
		t.Requested.MemBytes += r.Requested.MemBytes
		t.Used.CPUMilli += r.Used.CPUMilli
		t.Used.MemBytes += r.Used.MemBytes
		t.HasUse = t.HasUse || r.HasUse
		u.Rows = append(u.Rows, r)
	}
	if u.Priced {
		for i := range u.Rows {
			u.Rows[i].PerHour, u.Rows[i].PerMonth = prices.cost(u.Rows[i].Requested)
		}
		u.Total.PerHour, u.Total.PerMonth = prices.cost(u.Total.Requested)
	}
}

// componentOf is a workload's component: its label, else its name without
// the app's prefix.
func componentOf(m metav1.ObjectMeta, app string) string {
	if c := m.Labels[layout.LabelComponent]; c != "" {
		return c
	}
	if len(m.Name) > len(app)+1 && m.Name[:len(app)+1] == app+"-" {
		return m.Name[len(app)+1:]
	}
	return m.Name
}

// cost formats the price of r per hour and per 30-day month.
func (p Prices) cost(r resourceUse) (hour, month string) {
	h := p.hourly(r)
	return p.money(h, 4), p.money(h*hoursPerMonth, 2)
}

func (p Prices) money(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if p.Currency != "" {
		s += " " + p.Currency
	}
	return s
}

// fmtCPU shows millicores as Kubernetes writes them: 250m, 2, 1.5.
func fmtCPU(milli int64) string {
	switch {
	case milli%1000 == 0:
		return strconv.FormatInt(milli/1000, 10)
	case milli < 1000:
		return strconv.FormatInt(milli, 10) + "m"
	}
	return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64)
}

// fmtMem shows bytes in MiB below a GiB, else in GiB to two decimals.
func fmtMem(b int64) string {
	if b < gib {
		return fmt.Sprintf("%.0fMi", float64(b)/(1<<20))
	}
	return strconv.FormatFloat(math.Round(float64(b)/gib*100)/100, 'f', -1, 64) + "Gi"
}
