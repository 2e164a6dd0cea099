package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, registered on one registry.
type metrics struct {
	events        *prometheus.CounterVec
	ingestSeconds prometheus.Histogram
	checks        *prometheus.CounterVec
	checkSeconds  *prometheus.HistogramVec
	phases        *prometheus.CounterVec
	github        *prometheus.CounterVec
	streams       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_events_received_total",
			Help: "Flux events received, by result (applied, ignored, duplicate, unauthorized, too_large, overloaded, malformed, error).",
		}, []string{"result"}),
		ingestSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fleetwright_webhook_event_ingest_duration_seconds",
			Help:    "Time from receiving a Flux event to answering it, including the durable write.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_probe_checks_total",
			Help: "Probe check attempts, by check (sync, readiness, reachability) and outcome state.",
		}, []string{"check", "state"}),
		checkSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fleetwright_webhook_probe_check_duration_seconds",
			Help:    "Duration of one probe check attempt, by check.",
			Buckets: prometheus.DefBuckets,
		}, []string{"check"}),
		phases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_phase_changes_total",
			Help: "Deployment phase changes, by the phase entered.",
		}, []string{"phase"}),
		github: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetwright_webhook_github_requests_total",
			Help: "GitHub deployment API requests, by result (ok, error).",
		}, []string{"result"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fleetwright_webhook_streams",
			Help: "Open server-sent event streams.",
		}),
	}
	reg.MustRegister(m.events, m.ingestSeconds, m.checks, m.checkSeconds, m.phases, m.github, m.streams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
