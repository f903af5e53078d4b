package catalog

import (
	"github.com/pitbossdev/pitboss/market"
)

// Profile is the public profile of a wallet: what the catalogue's /public-profile,
// the data service's leaderboard and market positions show besides the address.
// Wallets without a catalogued profile still have a Pseudonym. Dates are Unix
// seconds (0: unknown).
type Profile struct {
	Address      market.Address
	Name         string // display name; Pseudonym(Address) when empty
	Bio          string
	ProfileImage string
	XUsername    string
	Verified     bool
	CreatedAt    int64
}

// DisplayName returns Name, or the wallet's pseudonym when it has none.
func (p *Profile) DisplayName() string {
	if p.Name != "" {
		return p.Name
	}
	return Pseudonym(p.Address)
}

// ProfileOf returns the catalogued profile of a, or a profile holding only the
// address (DisplayName: the pseudonym) and false.
func (c *Catalog) ProfileOf(a market.Address) (Profile, bool) {
	if i, ok := c.profileByAddr[a]; ok {
		return c.profiles[i], true
	}
	return Profile{Address: a}, false
}

// Profiles returns every catalogued profile in catalogue order. The slice must not be
// modified.
func (c *Catalog) Profiles() []Profile { return c.profiles }

var pseudonymAdjectives = [64]string{
	"Agile", "Amber", "Ancient", "Bold", "Brave", "Breezy", "Bright", "Brisk",
	"Calm", "Clever", "Cosmic", "Crafty", "Crimson", "Curious", "Dapper", "Daring",
	"Dusky", "Eager", "Electric", "Elegant", "Fabled", "Fearless", "Fierce", "Frosty",
	"Gentle", "Gilded", "Glad", "Golden", "Grand", "Happy", "Hidden", "Humble",
	"Icy", "Jolly", "Keen", "Kind", "Lively", "Lucky", "Lunar", "Mellow",
	"Misty", "Noble", "Nimble", "Patient", "Plucky", "Proud", "Quiet", "Quick",
	"Radiant", "Rapid", "Rustic", "Sharp", "Silent", "Silver", "Sleek", "Solar",
	"Steady", "Stormy", "Swift", "Tidy", "Vivid", "Wild", "Wise", "Zesty",
}

var pseudonymAnimals = [64]string{
	"Albatross", "Antelope", "Badger", "Bison", "Bobcat", "Buffalo", "Camel", "Caribou",
	"Cheetah", "Condor", "Cougar", "Coyote", "Crane", "Dingo", "Dolphin", "Eagle",
	"Egret", "Falcon", "Ferret", "Finch", "Flamingo", "Fox", "Gazelle", "Gecko",
	"Gibbon", "Giraffe", "Heron", "Hornet", "Ibex", "Iguana", "Jackal", "Jaguar",
	"Kestrel", "Koala", "Lemur", "Leopard", "Lynx", "Macaw", "Marmot", "Meerkat",
	"Mongoose", "Moose", "Narwhal", "Ocelot", "Orca", "Osprey", "Otter", "Owl",
	"Panther", "Pelican", "Puffin", "Quail", "Raven", "Salmon", "Seal", "Sparrow",
	"Stork", "Tapir", "Tiger", "Toucan", "Walrus", "Weasel", "Wombat", "Zebra",
}

const domainPseudonym = "pitboss/catalog/pseudonym/v1"

// Pseudonym returns the wallet's stable generated name, "Adjective-Animal": the
// first two bytes of SHA-256("pitboss/catalog/pseudonym/v1" ‖ 0x00 ‖ lower-case
// address) pick one of 64 adjectives and one of 64 animals. Different wallets can
// share a pseudonym; it is a display name, never an identifier.
func Pseudonym(a market.Address) string {
	d := digest(domainPseudonym, a.String())
	return pseudonymAdjectives[d[0]&63] + "-" + pseudonymAnimals[d[1]&63]
}
