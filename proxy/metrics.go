package proxy

import "github.com/prometheus/client_golang/prometheus"

// metrics are the proxy's Prometheus series (labelled by provider,
// never by conversation).
type metrics struct {
	requests       *prometheus.CounterVec
	tokensReceived *prometheus.CounterVec
	tokensUpstream *prometheus.CounterVec
	reshaped       *prometheus.CounterVec
	upstreamErrors *prometheus.CounterVec
	turns          *prometheus.CounterVec
	added          prometheus.Histogram
}

func newMetrics() *metrics {
	return &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_requests_total", Help: "Model calls through the proxy, by provider and outcome (ok, bad_request, upstream_error, upstream_NNN, store_error, error).",
		}, []string{"provider", "outcome"}),
		tokensReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_tokens_received_total", Help: "Tokens of the system prompts, tools and messages the proxy received, by provider.",
		}, []string{"provider"}),
		tokensUpstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_tokens_upstream_total", Help: "Tokens of the system prompts, tools and messages the proxy sent upstream, by provider.",
		}, []string{"provider"}),
		reshaped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_reshaped_total", Help: "Calls whose history the proxy reshaped, by provider and mode.",
		}, []string{"provider", "mode"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_upstream_errors_total", Help: "Upstream failures, by provider and kind (unreachable, status, cut, unreadable).",
		}, []string{"provider", "kind"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_proxy_turns_total", Help: "Turns the proxy stored, by outcome.",
		}, []string{"outcome"}),
		added: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "strata_proxy_added_seconds", Help: "Time the proxy spends on a call before it goes upstream (reading, storing, reshaping).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.requests, m.tokensReceived, m.tokensUpstream, m.reshaped, m.upstreamErrors, m.turns, m.added} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}
