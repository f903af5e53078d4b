package sim

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pitbossdev/pitboss/market"
)

// The YAML form of a Config (`pitboss exchange --sim-config FILE`):
//
//	start: 2026-01-01T00:00:00Z     # or Unix ms; omit to start at the first step
//	path_every: 1m
//	rescan: 1m                      # without markets: look for new ones this often
//	defaults:                       # Params, by their yaml names
//	  vol: 0.25
//	  noise_every: 5s
//	  maker_size: 200
//	markets:                        # omit to drive every tradable market
//	  - market: will-it-rain-tomorrow   # a condition id or a slug
//	    fair: 0.62
//	    resolve_at_end: true
//
// Durations are Go durations ("1m30s"; negative ones switch a part off), sizes and
// probabilities exact decimals ("0.62", 200), times Unix ms or RFC 3339. Unknown keys
// are errors.

// ParseConfig parses a YAML configuration and validates it. It reports every problem
// at once, each as "line:col: message" wrapping ErrConfig.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if len(doc.Content) == 0 {
		return c, c.Validate()
	}
	p := &cfgParser{}
	root := doc.Content[0]
	p.mapping(root, func(key string, k, v *yaml.Node) {
		switch key {
		case "start":
			c.Start = p.time(v)
		case "rescan":
			c.Rescan = p.duration(v)
		case "path_every":
			c.PathEvery = p.duration(v)
		case "path_max":
			c.PathMax = int(p.int(v))
		case "defaults":
			p.params(v, &c.Defaults, nil)
		case "markets":
			if v.Kind != yaml.SequenceNode {
				p.bad(v, "markets must be a list")
				return
			}
			for _, item := range v.Content {
				var mc MarketConfig
				p.params(item, &mc.Params, func(key string, k, v *yaml.Node) bool {
					if key != "market" {
						return false
					}
					mc.Market = market.ConditionID(p.str(v))
					return true
				})
				if mc.Market == "" {
					p.bad(item, "market is missing")
				}
				c.Markets = append(c.Markets, mc)
			}
		default:
			p.bad(k, "unknown key %q", key)
		}
	})
	if len(p.errs) > 0 {
		return Config{}, errors.Join(p.errs...)
	}
	return c, c.Validate()
}

// LoadConfig reads and parses a YAML configuration file; errors name the file.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

type cfgParser struct {
	errs []error
}

func (p *cfgParser) bad(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%w: %d:%d: "+format, append([]any{ErrConfig, n.Line, n.Column}, args...)...))
}

// mapping calls fn for each key of a mapping node, refusing duplicates.
func (p *cfgParser) mapping(n *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.bad(n, "expected a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.bad(k, "expected a key")
			continue
		}
		if seen[k.Value] {
			p.bad(k, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k.Value, k, v)
	}
}

func (p *cfgParser) scalar(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.bad(n, "expected a single value")
		return "", false
	}
	return n.Value, true
}

func (p *cfgParser) str(n *yaml.Node) string {
	s, _ := p.scalar(n)
	return s
}

func (p *cfgParser) int(n *yaml.Node) int64 {
	s, ok := p.scalar(n)
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		p.bad(n, "%q is not an integer", s)
	}
	return v
}

func (p *cfgParser) duration(n *yaml.Node) time.Duration {
	s, ok := p.scalar(n)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		p.bad(n, "%q is not a duration (e.g. 1m30s)", s)
	}
	return d
}

func (p *cfgParser) time(n *yaml.Node) int64 {
	s, ok := p.scalar(n)
	if !ok {
		return 0
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 {
		return ms
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.UnixMilli() < 0 {
		p.bad(n, "%q is neither Unix milliseconds nor an RFC 3339 time", s)
		return 0
	}
	return t.UnixMilli()
}

var (
	microsType   = reflect.TypeFor[market.Micros]()
	durationType = reflect.TypeFor[time.Duration]()
	// paramFields maps each yaml name of Params to its field index.
	paramFields = func() map[string]int {
		m := map[string]int{}
		t := reflect.TypeFor[Params]()
		for i := 0; i < t.NumField(); i++ {
			m[t.Field(i).Tag.Get("yaml")] = i
		}
		return m
	}()
)

// params decodes a mapping of Params; extra, if set, handles keys that are not
// parameters (and reports whether it did).
func (p *cfgParser) params(n *yaml.Node, dst *Params, extra func(key string, k, v *yaml.Node) bool) {
	rv := reflect.ValueOf(dst).Elem()
	p.mapping(n, func(key string, k, v *yaml.Node) {
		if extra != nil && extra(key, k, v) {
			return
		}
		i, ok := paramFields[key]
		if !ok {
			p.bad(k, "unknown parameter %q", key)
			return
		}
		f := rv.Field(i)
		s, ok := p.scalar(v)
		if !ok {
			return
		}
		switch {
		case f.Type() == microsType:
			m, err := market.ParseMicros(s)
			if err != nil {
				p.bad(v, "%s: %q is not an exact decimal with at most 6 places", key, s)
			}
			f.SetInt(int64(m))
		case f.Type() == durationType:
			f.SetInt(int64(p.duration(v)))
		case key == "resolve_at":
			f.SetInt(p.time(v))
		case f.Kind() == reflect.Float64:
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				p.bad(v, "%s: %q is not a number", key, s)
			}
			f.SetFloat(x)
		case f.Kind() == reflect.Int:
			f.SetInt(p.int(v))
		case f.Kind() == reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				p.bad(v, "%s: %q is not true or false", key, s)
			}
			f.SetBool(b)
		}
	})
}
