package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version from the commit", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128013103-4363df544d79+dirty"}}, "v0.0.0-20261128013103-4363df544d79+dirty"},
		{"VCS stamp only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "4363df544d79aa0011223344556677889900aabb", "vcs.time", "2026-11-28T01:31:03Z", "vcs.modified", "false")}, "devel 4363df544d79 (2026-11-28T01:31:03Z)"},
		{"VCS stamp, modified", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "4363df5", "vcs.time", "2026-11-28T01:31:03Z", "vcs.modified", "true")}, "devel 4363df5 (2026-11-28T01:31:03Z, modified)"},
		{"nothing stamped", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (no version stamped: build with scripts/install.sh)"},
		{"no build info", nil, "unknown (built without module information)"},
	} {
		if got := buildVersion(tc.bi); got != tc.want {
			t.Errorf("%s: buildVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}
