# Reference growth norms from R's splines::bs and quantreg's rq(method = "br") for the tests of
# growth percentiles (docs/method.md §15). Run from this directory:
#   Rscript reference.R
# It writes, per cohort, <name>_measures.csv (the simulated cohort) and <name>_ref.csv (knots,
# boundaries, per-τ check loss, coefficients, and per student the SGP and cuts from R's
# coefficients), and basis.csv (bs() values at chosen points). Everything is seeded.
suppressPackageStartupMessages({ library(splines); library(quantreg) })

taus <- (1:100 - 0.5) / 100
cutP <- c(1, 10, 25, 50, 75, 90, 99)
f17 <- function(v) sprintf("%.17g", v)

spline_of <- function(v) {
  list(knots = round(quantile(v, c(0.2, 0.4, 0.6, 0.8), names = FALSE), 3),
       bounds = round(extendrange(v, f = 0.1), 3))
}
basis_of <- function(v, s) {
  v <- pmin(pmax(v, s$bounds[1]), s$bounds[2])
  bs(v, knots = s$knots, Boundary.knots = s$bounds)
}

reference <- function(name, priors, current) {
  splines <- lapply(priors, spline_of)
  X <- cbind(1, do.call(cbind, lapply(seq_along(priors), function(k) basis_of(priors[[k]], splines[[k]]))))
  coef <- matrix(NA_real_, length(taus), ncol(X))
  loss <- numeric(length(taus))
  for (k in seq_along(taus)) {
    fit <- suppressWarnings(rq.fit(X, current, tau = taus[k], method = "br"))
    coef[k, ] <- fit$coefficients
    u <- current - X %*% fit$coefficients
    loss[k] <- sum(u * (taus[k] - (u < 0)))
  }
  lowest <- min(current); highest <- max(current)
  Q <- X %*% t(coef)
  Q <- t(apply(Q, 1, sort))
  Q <- pmin(pmax(round(Q, 5), lowest), highest)
  sgp <- pmin(pmax(rowSums(Q < current), 1), 99)
  out <- c("part,index,values")
  for (k in seq_along(priors)) {
    out <- c(out, sprintf("knots,%d,%s", k, paste(f17(splines[[k]]$knots), collapse = ";")),
             sprintf("boundaries,%d,%s", k, paste(f17(splines[[k]]$bounds), collapse = ";")))
  }
  out <- c(out, sprintf("range,0,%s;%s", f17(lowest), f17(highest)))
  for (k in seq_along(taus)) {
    out <- c(out, sprintf("loss,%d,%s", k, f17(loss[k])),
             sprintf("coefficients,%d,%s", k, paste(f17(coef[k, ]), collapse = ";")))
  }
  for (i in seq_along(current)) {
    out <- c(out, sprintf("student,%d,%d;%s", i, sgp[i], paste(f17(Q[i, cutP]), collapse = ";")))
  }
  writeLines(out, paste0(name, "_ref.csv"))
  m <- data.frame(student = seq_along(current))
  for (k in seq_along(priors)) m[[paste0("prior", k)]] <- f17(priors[[k]])
  m$current <- f17(current)
  write.csv(m, paste0(name, "_measures.csv"), row.names = FALSE, quote = FALSE)
}

# One prior, 1500 students, measures to 0.1 unit; growth slows and spreads at the top.
set.seed(15001)
n <- 1500
p1 <- round(rnorm(n, 800, 150), 1)
cur <- round(p1 + 120 - 0.15 * (p1 - 800) + rnorm(n, 0, 50 + 0.1 * abs(p1 - 800)), 1)
reference("oneprior", list(p1), cur)

# Two priors, 1500 students: the older prior also speaks for the student.
set.seed(15002)
n <- 1500
a <- rnorm(n, 0, 1)
p1 <- round(700 + 140 * a + rnorm(n, 0, 40), 1)
p2 <- round(p1 + 100 + rnorm(n, 0, 45), 1)
cur <- round(0.35 * p1 + 0.65 * p2 + 110 + rnorm(n, 0, 55), 1)
reference("twoprior", list(p1, p2), cur)

# Heavy ties: one prior, 1200 students, measures to 10 units.
set.seed(15003)
n <- 1200
p1 <- round(rnorm(n, 500, 120), -1)
cur <- round(p1 + 90 + rnorm(n, 0, 60), -1)
reference("ties", list(p1), cur)

# The basis at the knots, between them and clamped beyond the boundaries, on the ties cohort's
# spline and on one with a repeated knot.
pts <- list(
  list(knots = c(400, 460, 530, 600), bounds = c(180, 820)),
  list(knots = c(1, 2, 3, 3), bounds = c(-1, 6)))
out <- c("knots,boundaries,x,basis")
for (s in pts) {
  k <- c(s$bounds[1], s$knots, s$bounds[2])
  x <- sort(unique(c(k, (head(k, -1) + tail(k, -1)) / 2, head(k, -1) + 0.1 * diff(k),
                     s$bounds[1] - 50, s$bounds[2] + 50, s$bounds[2] - 1e-9)))
  b <- basis_of(x, s)
  for (i in seq_along(x)) {
    out <- c(out, sprintf("%s,%s,%s,%s", paste(f17(s$knots), collapse = ";"),
                          paste(f17(s$bounds), collapse = ";"), f17(x[i]), paste(f17(b[i, ]), collapse = ";")))
  }
}
writeLines(out, "basis.csv")
