package policies

// GeoStatus is the trading status of the host's location, from the service's
// /api/geoblock. The zero value is GeoUnknown, under which nothing may open a
// position (default deny): the composition root must set the status before trading,
// GeoAllowed for the embedded venue.
type GeoStatus uint8

// Geoblock statuses.
const (
	GeoUnknown   GeoStatus = iota // never checked: deny every order
	GeoAllowed                    // trading allowed
	GeoCloseOnly                  // only orders that reduce a position
	GeoBlocked                    // no orders at all
)

var geoNames = [...]string{"unknown", "allowed", "close-only", "blocked"}

// String returns "unknown", "allowed", "close-only" or "blocked".
func (s GeoStatus) String() string {
	if int(s) < len(geoNames) {
		return geoNames[s]
	}
	return "invalid"
}

// Geoblock is the geoblock status passed to the chain as a value. Country and Region
// are informational (audit reasons). The zero value is GeoUnknown.
type Geoblock struct {
	Status  GeoStatus
	Country string // ISO 3166-1 alpha-2, may be empty
	Region  string // may be empty
}

// GeoblockFrom builds the status from the fields of a /api/geoblock response
// ({blocked, closeOnly, country, region}); blocked wins over closeOnly.
func GeoblockFrom(blocked, closeOnly bool, country, region string) Geoblock {
	g := Geoblock{Status: GeoAllowed, Country: country, Region: region}
	switch {
	case blocked:
		g.Status = GeoBlocked
	case closeOnly:
		g.Status = GeoCloseOnly
	}
	return g
}

func (g Geoblock) where() string {
	if g.Country == "" {
		return "this location"
	}
	if g.Region != "" {
		return g.Country + "/" + g.Region
	}
	return g.Country
}
