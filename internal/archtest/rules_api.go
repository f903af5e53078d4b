package archtest

// The api package holds the JSON shapes that the local server (sandbox/server) and
// the remote client (adapters/clob) share byte for byte. It must stay a leaf so that
// both can import it without pulling each other's dependencies
// (docs/design/0021-api-package.md).
func init() {
	Rules = append(Rules, Rule{
		Name:       "7: api is a leaf: it imports only market, the standard library and shopspring/decimal",
		Applies:    func(p string) bool { return under(p, "api") },
		Transitive: true,
		Forbidden: func(p, imp string) bool {
			if r, ok := rel(imp); ok {
				return !under(r, "market", "api")
			}
			return !isStdlib(imp) && !external(imp, "github.com/shopspring/decimal")
		},
	})
}
