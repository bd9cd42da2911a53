# Times R's quantreg on the growth-fit benchmark's cohort (growthnorms_bench_test.go): the
# design of docs/method.md §15 built as in reference.R, then rq.fit(method = "br") for the 100 τ,
# only those fits timed. Prints the elapsed seconds and the CPU seconds (user + system).
suppressPackageStartupMessages({ library(splines); library(quantreg) })
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
basis_of <- function(v) {
  knots <- round(quantile(v, c(0.2, 0.4, 0.6, 0.8), names = FALSE), 3)
  bounds <- round(extendrange(v, f = 0.1), 3)
  bs(pmin(pmax(v, bounds[1]), bounds[2]), knots = knots, Boundary.knots = bounds)
}
X <- cbind(1, basis_of(d$prior1), basis_of(d$prior2))
taus <- (1:100 - 0.5) / 100
t0 <- proc.time()
for (tau in taus) fit <- suppressWarnings(rq.fit(X, d$current, tau = tau, method = "br"))
t <- proc.time() - t0
cat(t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], "\n")
