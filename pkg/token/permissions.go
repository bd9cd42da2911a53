package token

import "strings"

// Services a token can be issued for; the token's aud claim is one of them.
const (
	ServiceScoring  = "scoring"
	ServiceForecast = "forecast"
)

// Permissions name endpoint groups (README, Endpoints). A permission belongs to the service named by its
// prefix ("score:" to scoring, "forecast:" to forecast); PermAll grants everything on every service.
const (
	PermScoreStandard   = "score:standard"
	PermScoreBayes      = "score:bayes"
	PermScoreStrands    = "score:strands"
	PermScoreScale      = "score:scale"
	PermScoreAdaptive   = "score:adaptive"
	PermForecastReading = "forecast:reading"
	PermForecastGroup   = "forecast:group"
	PermScoreBatch      = "score:batch"    // the scoring service's NDJSON batch stream (each record needs its own permission too)
	PermForecastBatch   = "forecast:batch" // the forecast service's batch and group streams
	PermContentRead     = "content:read"   // the scoring service's content catalog
	PermAll             = "*"
)

// Services lists the known services.
func Services() []string { return []string{ServiceScoring, ServiceForecast} }

// Permissions lists the known permissions, PermAll last.
func Permissions() []string {
	return []string{
		PermScoreStandard, PermScoreBayes, PermScoreStrands, PermScoreScale, PermScoreAdaptive,
		PermScoreBatch, PermContentRead, PermForecastReading, PermForecastGroup, PermForecastBatch, PermAll,
	}
}

func knownService(s string) bool { return s == ServiceScoring || s == ServiceForecast }

func knownPermission(p string) bool {
	for _, q := range Permissions() {
		if p == q {
			return true
		}
	}
	return false
}

// serviceOf is the service a permission belongs to; "" for PermAll, which belongs to all.
func serviceOf(perm string) string {
	switch {
	case strings.HasPrefix(perm, "score:"), strings.HasPrefix(perm, "content:"):
		return ServiceScoring
	case strings.HasPrefix(perm, "forecast:"):
		return ServiceForecast
	}
	return ""
}

// scopeFor keeps the permissions that mean something on service: a token is bound to one
// service by its aud claim, so the other service's permissions would only be noise in it.
func scopeFor(perms []string, service string) []string {
	scope := make([]string, 0, len(perms))
	for _, p := range perms {
		if s := serviceOf(p); s == "" || s == service {
			scope = append(scope, p)
		}
	}
	return scope
}
