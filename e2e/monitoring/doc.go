// Package monitoring tests the monitoring component (deploy/k8s/components/monitoring) against
// real parts: both service binaries in dev mode on loopback, a real Prometheus (Debian's
// prometheus package) scraping them every second with the component's rules loaded, and
// promtool. It sends a short load over both fronts, then wants promtool check metrics to find
// nothing in a live scrape of each service, every query of the dashboard to return data for each
// service, a request rate and a latency quantile for every route the load used, and every rule to
// evaluate cleanly. Without prometheus and promtool it fails, saying how to install them.
package monitoring
