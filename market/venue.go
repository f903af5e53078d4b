package market

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// MaxVenueNameLen is the longest venue name (the limit of a secret-store item name
// part).
const MaxVenueNameLen = 64

// ErrBadVenueName is returned by VenueName for a URL without a usable host, and by
// ValidVenueName's callers for a name outside the alphabet.
var ErrBadVenueName = errors.New("invalid venue name: use 1-64 characters from a-z 0-9 . _ -, starting with a letter or digit")

// VenueName derives the name under which a venue's API credentials are kept (the
// VENUE of the secret item "api/VENUE/0x…") from the base URL of its CLOB service:
// the host in lower case, and the port joined with '-' when the URL names one.
//
//	https://clob.example.com       → clob.example.com
//	http://127.0.0.1:8080          → 127.0.0.1-8080
//	http://[::1]:8080              → ip6-1-8080 (colons of an IPv6 literal become '-')
//
// The path and scheme are ignored: one host and port is one venue. Every program
// that stores or looks up credentials by venue (`pitboss keys`, a remote agent) calls
// it, so they agree without configuration. It fails with ErrBadVenueName when the
// URL has no host or the name would be longer than MaxVenueNameLen; callers then
// ask for an explicit name.
func VenueName(baseURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return "", ErrBadVenueName
	}
	host, port := u.Hostname(), u.Port()
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = "ip6-" + strings.Trim(strings.ReplaceAll(host, ":", "-"), "-")
	}
	name := host
	if port != "" {
		name += "-" + port
	}
	if !ValidVenueName(name) {
		return "", ErrBadVenueName
	}
	return name, nil
}

// ValidVenueName reports whether s can name a venue: 1 to MaxVenueNameLen
// characters from a-z A-Z 0-9 '.', '_', '-', starting with a letter or a digit.
func ValidVenueName(s string) bool {
	if len(s) == 0 || len(s) > MaxVenueNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
