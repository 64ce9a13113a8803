package main

import (
	"maps"
	"testing"
)

func TestShortIDs(t *testing.T) {
	got := shortIDs([]string{"warn-session-1", "warn-session-2", "3f2a9c1e-0000", "3f2a9c1f-0000", "abc", "abcdefghij", "5e551011-dead"})
	want := map[string]string{
		"warn-session-1": "warn-session-1", "warn-session-2": "warn-session-2",
		"3f2a9c1e-0000": "3f2a9c1e", "3f2a9c1f-0000": "3f2a9c1f",
		"abc": "abc", "abcdefghij": "abcdefgh", "5e551011-dead": "5e551011",
	}
	if !maps.Equal(got, want) {
		t.Errorf("shortIDs = %v, want %v", got, want)
	}
	// OpenCode's IDs: the first 8 characters name them all.
	got = shortIDs([]string{"ses_df50042b5ffebAAwYw49VT3IXP", "ses_df503d26cffejYoal2hatp7eNO", "ses_df504aea5ffeMZ5XHtjEMBLEN3", "ses_df6079748ffemAqXkUt1Mtb5uQ"})
	want = map[string]string{
		"ses_df50042b5ffebAAwYw49VT3IXP": "ses_df500", "ses_df503d26cffejYoal2hatp7eNO": "ses_df503",
		"ses_df504aea5ffeMZ5XHtjEMBLEN3": "ses_df504", "ses_df6079748ffemAqXkUt1Mtb5uQ": "ses_df60",
	}
	if !maps.Equal(got, want) {
		t.Errorf("shortIDs of OpenCode's = %v, want %v", got, want)
	}
}
