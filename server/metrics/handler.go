package metrics

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ContentType is the Content-Type of a /metrics response: Triton's, without a version
// parameter (§7).
const ContentType = "text/plain; charset=utf-8"

// Handler returns the /metrics HTTP handler for g. It answers GET with the text exposition of
// everything g gathers, written the way Triton writes it (§7.3), and any other method with 405.
// If gathering fails it answers 500 with the error, and no partial exposition.
func Handler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed: /metrics serves GET only", http.StatusMethodNotAllowed)
			return
		}
		mfs, err := g.Gather()
		if err != nil {
			http.Error(w, "error gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		var buf bytes.Buffer
		if err := writeText(&buf, mfs); err != nil {
			http.Error(w, "error encoding metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		_, _ = w.Write(buf.Bytes())
	})
}

// writeText writes mfs in the Prometheus text exposition format as Triton's prometheus-cpp
// serializer does (§7.3): HELP, TYPE, then the samples; labels in the order given (client_golang
// sorts them by name) with quantile or le last; values with up to 16 significant digits, as C++
// writes them ("12884901888", "0.37", "1e-06", "+Inf", "Nan"); summaries as _count, _sum, then
// the quantiles; histograms as _count, _sum, then the cumulative _bucket series ending with
// le="+Inf". Families without series are left out. A family whose metric or label names need
// UTF-8 quoting, which Triton never emits, is written by expfmt instead.
func writeText(w io.Writer, mfs []*dto.MetricFamily) error {
	var b bytes.Buffer
	for _, mf := range mfs {
		if len(mf.GetMetric()) == 0 {
			continue
		}
		if !legacyNames(mf) {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				return err
			}
			continue
		}
		writeFamily(&b, mf)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// legacyNames reports whether the names of mf need no quoting.
func legacyNames(mf *dto.MetricFamily) bool {
	if !model.LegacyValidation.IsValidMetricName(mf.GetName()) {
		return false
	}
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if !model.LegacyValidation.IsValidLabelName(lp.GetName()) {
				return false
			}
		}
	}
	return true
}

func writeFamily(b *bytes.Buffer, mf *dto.MetricFamily) {
	name := mf.GetName()
	b.WriteString("# HELP ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(escapeHelp(mf.GetHelp()))
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typeName(mf.GetType()))
	b.WriteByte('\n')
	for _, m := range mf.GetMetric() {
		ts := m.TimestampMs
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			writeSample(b, name, m.GetLabel(), "", 0, m.GetCounter().GetValue(), ts)
		case dto.MetricType_GAUGE:
			writeSample(b, name, m.GetLabel(), "", 0, m.GetGauge().GetValue(), ts)
		case dto.MetricType_SUMMARY:
			s := m.GetSummary()
			writeSample(b, name+"_count", m.GetLabel(), "", 0, float64(s.GetSampleCount()), ts)
			writeSample(b, name+"_sum", m.GetLabel(), "", 0, s.GetSampleSum(), ts)
			for _, q := range s.GetQuantile() {
				writeSample(b, name, m.GetLabel(), "quantile", q.GetQuantile(), q.GetValue(), ts)
			}
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h := m.GetHistogram()
			count := float64(h.GetSampleCount())
			if h.SampleCountFloat != nil {
				count = h.GetSampleCountFloat()
			}
			writeSample(b, name+"_count", m.GetLabel(), "", 0, count, ts)
			writeSample(b, name+"_sum", m.GetLabel(), "", 0, h.GetSampleSum(), ts)
			inf := false
			for _, bk := range h.GetBucket() {
				n := float64(bk.GetCumulativeCount())
				if bk.CumulativeCountFloat != nil {
					n = bk.GetCumulativeCountFloat()
				}
				writeSample(b, name+"_bucket", m.GetLabel(), "le", bk.GetUpperBound(), n, ts)
				inf = inf || math.IsInf(bk.GetUpperBound(), +1)
			}
			if !inf {
				writeSample(b, name+"_bucket", m.GetLabel(), "le", math.Inf(+1), count, ts)
			}
		default: // untyped
			writeSample(b, name, m.GetLabel(), "", 0, m.GetUntyped().GetValue(), ts)
		}
	}
}

// typeName is the TYPE keyword of t; a gauge histogram, which the 0.0.4 text format cannot
// express, is written as a histogram.
func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	case dto.MetricType_SUMMARY:
		return "summary"
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return "histogram"
	default:
		return "untyped"
	}
}

// writeSample writes one sample line. extra names a synthetic label (quantile, le) with value
// extraValue, written last; "" means none.
func writeSample(b *bytes.Buffer, name string, labels []*dto.LabelPair, extra string, extraValue, v float64, ts *int64) {
	b.WriteString(name)
	if len(labels) > 0 || extra != "" {
		b.WriteByte('{')
		for i, lp := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(lp.GetName())
			b.WriteString(`="`)
			b.WriteString(escapeLabel(lp.GetValue()))
			b.WriteByte('"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(extra)
			b.WriteString(`="`)
			b.WriteString(formatValue(extraValue))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatValue(v))
	if ts != nil {
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(*ts, 10))
	}
	b.WriteByte('\n')
}

// formatValue writes v as C++'s default float notation at precision 16 ("%.16g") does, with
// prometheus-cpp's spellings of the special values.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "Nan"
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', 16, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
