package github

import (
	"net/url"
	"strings"
)

// nonGitHubHosts are well-known forges that are never GitHub, so a remote
// there is not linked (and no token is ever offered to them).
var nonGitHubHosts = map[string]bool{
	"gitlab.com":        true,
	"bitbucket.org":     true,
	"codeberg.org":      true,
	"gitea.com":         true,
	"git.sr.ht":         true,
	"dev.azure.com":     true,
	"ssh.dev.azure.com": true,
}

// ParseRemote reads a git remote URL of a repository on github.com or a
// GitHub Enterprise host: https://host/o/r(.git), http://…, ssh://[user@]host[:port]/o/r(.git),
// git://host/o/r and the scp form [user@]host:o/r(.git). host is lower-case
// and keeps an explicit non-default port for http(s) (a GHE web port), but
// not for ssh or git, whose port says nothing about the API.
// Credentials embedded in the URL are never returned.
func ParseRemote(remote string) (host, owner, repo string, ok bool) {
	remote = strings.TrimSpace(remote)
	var path string
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil || u.Opaque != "" {
			return "", "", "", false
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			host = trimPort(u.Host, "443")
		case "http":
			host = trimPort(u.Host, "80")
		case "ssh", "git+ssh", "ssh+git", "git":
			host = u.Hostname()
		default:
			return "", "", "", false
		}
		path = u.Path
	} else {
		// scp-like syntax; git treats a slash before the first colon as a
		// local path, and so does this.
		hostPart, rest, found := strings.Cut(remote, ":")
		if !found || strings.Contains(hostPart, "/") {
			return "", "", "", false
		}
		if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
			hostPart = hostPart[at+1:]
		}
		if len(hostPart) < 2 { // "C:/x" is a Windows path, not a host
			return "", "", "", false
		}
		host, path = hostPart, rest
	}
	host = canonicalHost(strings.ToLower(host))
	if !validHost(host) || nonGitHubHosts[host] || strings.HasPrefix(host, "gitlab.") {
		return "", "", "", false
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	owner, repo, found := strings.Cut(path, "/")
	if !found || !validOwner(owner) || !validRepo(repo) {
		return "", "", "", false
	}
	return host, owner, repo, true
}

// APIURL is the REST API base URL for a host: api.github.com for
// github.com, api.<tenant>.ghe.com for GHE.com data residency, and
// https://host/api/v3/ for GitHub Enterprise Server.
func APIURL(host string) string {
	switch {
	case host == "github.com":
		return "https://api.github.com/"
	case strings.HasSuffix(host, ".ghe.com"):
		return "https://api." + host + "/"
	default:
		return "https://" + host + "/api/v3/"
	}
}

// canonicalHost folds GitHub's alternative names (SSH over port 443, the
// www alias) into github.com.
func canonicalHost(h string) string {
	switch h {
	case "ssh.github.com", "www.github.com":
		return "github.com"
	}
	return h
}

func trimPort(hostport, defaultPort string) string {
	return strings.TrimSuffix(hostport, ":"+defaultPort)
}

// validHost accepts a DNS name (letters, digits, dots, hyphens) with an
// optional numeric port.
func validHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if name == "" || len(name) > 253 || name[0] == '.' || name[0] == '-' || strings.HasSuffix(name, ".") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	if hasPort {
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
	}
	return true
}

// validOwner accepts GitHub user and organization logins, with the
// underscores and dots GitHub Enterprise allows in logins synced from a
// directory.
func validOwner(s string) bool {
	if s == "" || len(s) > 100 || !isAlnum(rune(s[0])) {
		return false
	}
	for _, c := range s {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// validRepo accepts GitHub repository names: letters, digits, '.', '-', '_'.
func validRepo(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
