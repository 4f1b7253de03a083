package httpapi

import "testing"

func TestPickEncoding(t *testing.T) {
	tests := []struct {
		accept, want string
	}{
		{"", ""},                                      // no header: identity
		{"gzip", "gzip"},                              // one coding
		{"deflate", "deflate"},                        // the other
		{"br", ""},                                    // unsupported only
		{"gzip;q=0.5, deflate", "deflate"},            // higher weight wins
		{"deflate;q=0.5,gzip;q=0.8", "gzip"},          // no spaces
		{"gzip;q=0", ""},                              // refused
		{"gzip;q=0.5, identity", ""},                  // identity weighs more
		{"identity;q=0, gzip;q=0.1", "gzip"},          // identity refused
		{" GZIP ; Q=1", "gzip"},                       // case and spaces in the name; "Q=" is no weight
		{"gzip;level=1;q=0.2, deflate;q=0.1", "gzip"}, // a parameter before q
		{"gzip;q=abc", "gzip"},                        // a bad weight is ignored
		{"gzip, deflate", "gzip"},                     // a tie keeps the first
		{",,gzip,", "gzip"},                           // empty elements
		{"*", ""},                                     // a wildcard is not taken as a coding
	}
	for _, tt := range tests {
		if got := pickEncoding(tt.accept); got != tt.want {
			t.Errorf("pickEncoding(%q) = %q; want %q", tt.accept, got, tt.want)
		}
	}
}
