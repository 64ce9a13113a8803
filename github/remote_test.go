package github

import "testing"

func TestParseRemote(t *testing.T) {
	cases := []struct {
		url               string
		host, owner, repo string
		ok                bool
	}{
		{"https://github.com/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"https://github.com/acme/widgets", "github.com", "acme", "widgets", true},
		{"https://github.com/acme/widgets/", "github.com", "acme", "widgets", true},
		{"https://GitHub.com/Acme/Widgets.git", "github.com", "Acme", "Widgets", true},
		{"http://github.com/acme/widgets", "github.com", "acme", "widgets", true},
		{"https://github.com:443/acme/widgets", "github.com", "acme", "widgets", true},
		{"https://x-access-token:ghs_secret@github.com/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"git@github.com:acme/widgets.git", "github.com", "acme", "widgets", true},
		{"git@github.com:acme/widgets", "github.com", "acme", "widgets", true},
		{"github.com:acme/widgets.git", "github.com", "acme", "widgets", true},
		{"ssh://git@github.com/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"ssh://git@ssh.github.com:443/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"ssh://git@github.com:22/acme/widgets", "github.com", "acme", "widgets", true},
		{"git+ssh://git@github.com/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"git://github.com/acme/widgets.git", "github.com", "acme", "widgets", true},
		{"  https://github.com/acme/widgets.git\n", "github.com", "acme", "widgets", true},
		{"https://github.com/acme/my.dotted_repo-1.git", "github.com", "acme", "my.dotted_repo-1", true},
		{"https://ghe.corp.example/platform/tether.git", "ghe.corp.example", "platform", "tether", true},
		{"https://ghe.corp.example:8443/platform/tether", "ghe.corp.example:8443", "platform", "tether", true},
		{"git@ghe.corp.example:platform/tether.git", "ghe.corp.example", "platform", "tether", true},
		{"org-123@ghe.corp.example:platform/tether.git", "ghe.corp.example", "platform", "tether", true},
		{"https://tenant.ghe.com/platform/tether", "tenant.ghe.com", "platform", "tether", true},
		{"git@github.com:acme/.github.git", "github.com", "acme", ".github", true},
		{"https://github.com/first_last/tether", "github.com", "first_last", "tether", true},

		{"", "", "", "", false},
		{"https://github.com/acme", "", "", "", false},
		{"https://github.com/acme/widgets/tree/main", "", "", "", false},
		{"https://github.com/acme/.git", "", "", "", false},
		{"https://github.com/acme/..", "", "", "", false},
		{"https://github.com//widgets", "", "", "", false},
		{"https://github.com/-acme/widgets", "", "", "", false},
		{"https://github.com/acme/wid gets", "", "", "", false},
		{"https://github.com/ac%2Fme/widgets", "", "", "", false},
		{"file:///srv/git/widgets.git", "", "", "", false},
		{"/srv/git/acme/widgets.git", "", "", "", false},
		{"../acme/widgets", "", "", "", false},
		{"./dir:acme/widgets", "", "", "", false},
		{`C:\src\acme\widgets`, "", "", "", false},
		{"C:/src/acme/widgets", "", "", "", false},
		{"https://gitlab.com/acme/widgets.git", "", "", "", false},
		{"git@gitlab.corp.example:acme/widgets.git", "", "", "", false},
		{"git@bitbucket.org:acme/widgets.git", "", "", "", false},
		{"https://gitlab.com/group/sub/widgets.git", "", "", "", false},
		{"https://github.com:notaport/acme/widgets", "", "", "", false},
		{"https://[::1]/acme/widgets", "", "", "", false},
		{"https://exa_mple.com/acme/widgets", "", "", "", false},
		{"https://.github.com/acme/widgets", "", "", "", false},
	}
	for _, tc := range cases {
		host, owner, repo, ok := ParseRemote(tc.url)
		if host != tc.host || owner != tc.owner || repo != tc.repo || ok != tc.ok {
			t.Errorf("ParseRemote(%q) = %q %q %q %v; want %q %q %q %v", tc.url, host, owner, repo, ok, tc.host, tc.owner, tc.repo, tc.ok)
		}
	}
}

func TestAPIURL(t *testing.T) {
	cases := map[string]string{
		"github.com":            "https://api.github.com/",
		"tenant.ghe.com":        "https://api.tenant.ghe.com/",
		"ghe.corp.example":      "https://ghe.corp.example/api/v3/",
		"ghe.corp.example:8443": "https://ghe.corp.example:8443/api/v3/",
	}
	for host, want := range cases {
		if got := APIURL(host); got != want {
			t.Errorf("APIURL(%q) = %q, want %q", host, got, want)
		}
	}
}

// FuzzParseRemote: whatever the input, an accepted remote yields a valid
// host, owner and repo that read back the same from their https URL.
func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{
		"https://github.com/acme/widgets.git", "git@github.com:acme/widgets.git",
		"ssh://git@ssh.github.com:443/acme/widgets.git", "https://u:p@ghe.corp.example:8443/a/b/",
		"C:/x/y", "git://h/o/r", "https://github.com/acme/widgets.git.git", "h:o/r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		host, owner, repo, ok := ParseRemote(remote)
		if !ok {
			if host != "" || owner != "" || repo != "" {
				t.Fatalf("rejected %q but returned %q %q %q", remote, host, owner, repo)
			}
			return
		}
		if !validHost(host) || !validOwner(owner) || !validRepo(repo) {
			t.Fatalf("ParseRemote(%q) accepted invalid %q %q %q", remote, host, owner, repo)
		}
		h2, o2, r2, ok2 := ParseRemote("https://" + host + "/" + owner + "/" + repo + ".git")
		if !ok2 || h2 != host || o2 != owner || r2 != repo {
			t.Fatalf("round trip of %q: %q %q %q %v, want %q %q %q", remote, h2, o2, r2, ok2, host, owner, repo)
		}
	})
}
