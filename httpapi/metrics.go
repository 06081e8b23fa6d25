package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus series, served at /metrics. Routes
// are labelled by their path pattern (/v1/conversations/{id}/turns), never
// by the ids in them, so the series stay few.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	turns    *prometheus.CounterVec
	nodes    prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total", Help: "HTTP requests answered, by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "strata_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_turns_ingested_total", Help: "Turns received by the append route, by outcome (added, skipped).",
		}, []string{"outcome"}),
		nodes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "strata_nodes_made_total", Help: "Summary nodes the rollups after appends made.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.turns, m.nodes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registerer returns the registry /metrics serves, for handlers mounted
// beside the API (the proxy) to add their series to.
func (s *Server) Registerer() prometheus.Registerer { return s.metrics.reg }

// handler serves the series.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// middleware counts and times every huma operation by its path pattern.
func (m *metrics) middleware(ctx huma.Context, next func(huma.Context)) {
	start := time.Now()
	next(ctx)
	route := ctx.Operation().Method + " " + ctx.Operation().Path
	code := ctx.Status()
	if code == 0 {
		code = http.StatusOK
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
}
