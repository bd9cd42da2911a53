# Reference values for pkg/measure's CML calibration (TestCalibrateMatchesERm), from an
# independent implementation: R's eRm (Debian: apt-get install r-cran-erm).
#
# Regenerate from pkg/measure/testdata/calibrate:
#   Rscript erm.R
# It writes, for each data set NAME, NAME.csv (the response matrix in yardstick-calibrate's input
# format: person,<item id>,…; blanks for items not administered) and NAME.erm.csv (eRm's results).
# The data are simulated here with fixed seeds, so a rerun reproduces both files.
#
# eRm's betapar are easiness parameters: the difficulty is -betapar. With sum0 = TRUE (the default)
# the difficulties sum to zero, as in pkg/measure; se.beta is the standard error from the
# covariance W (W' H W)^-1 W', which is the pseudo-inverse of the information for the sum-zero W.
# infit and outfit are eRm's itemfit mean squares (persons with zero or perfect scores excluded).
suppressPackageStartupMessages(library(eRm))

simulate <- function(seed, persons, beta, design, extra_blank = 0, theta_mean = 0, theta_sd = 1) {
  set.seed(seed)
  k <- length(beta)
  theta <- rnorm(persons, theta_mean, theta_sd)
  p <- plogis(outer(theta, beta, "-"))
  x <- matrix(as.integer(runif(persons * k) < p), persons, k)
  x[!design(persons, k)] <- NA
  if (extra_blank > 0) x[matrix(runif(persons * k) < extra_blank, persons, k)] <- NA
  colnames(x) <- sprintf("I%02d", seq_len(k))
  x
}

# Booklet b of n_booklets takes blocks b and b+1 (cyclically) of n_booklets equal blocks.
cyclic_booklets <- function(n_booklets) function(persons, k) {
  block <- rep(seq_len(n_booklets), each = k / n_booklets)
  booklet <- (seq_len(persons) - 1) %% n_booklets + 1
  next_block <- booklet %% n_booklets + 1
  outer(booklet, block, "==") | outer(next_block, block, "==")
}
mcar <- function(rate) function(persons, k) matrix(runif(persons * k) >= rate, persons, k)

sets <- list(
  booklets = simulate(11, 900, seq(-2, 2, length.out = 24), cyclic_booklets(3), extra_blank = 0.02),
  random   = simulate(12, 400, c(-2.5, -1.8, -1.2, -0.7, -0.3, 0, 0.2, 0.5, 0.9, 1.4, 2, 2.6), mcar(0.35)),
  wide     = simulate(13, 2000, qnorm(seq(0.02, 0.98, length.out = 50)) * 1.2, cyclic_booklets(5),
                      theta_mean = 0.4, theta_sd = 1.3)
)

for (name in names(sets)) {
  x <- sets[[name]]
  cat(sprintf("%s: %d persons x %d items, %.1f%% blank\n", name, nrow(x), ncol(x), 100 * mean(is.na(x))))
  out <- data.frame(person = sprintf("P%04d", seq_len(nrow(x))), x, check.names = FALSE)
  write.csv(out, paste0(name, ".csv"), row.names = FALSE, quote = FALSE, na = "")
  m <- RM(x, sum0 = TRUE)
  # nlm's default tolerances leave eRm's estimate ~1e-6 from the optimum; restart from it.
  m <- RM(x, sum0 = TRUE, etaStart = m$etapar)
  fit <- itemfit(person.parameter(m))
  res <- data.frame(item = colnames(x), logit = sprintf("%.10f", -m$betapar), se = sprintf("%.10f", m$se.beta),
                    infit = sprintf("%.10f", fit$i.infitMSQ), outfit = sprintf("%.10f", fit$i.outfitMSQ))
  con <- file(paste0(name, ".erm.csv"), "w")
  writeLines(sprintf("# eRm %s, R %s: RM(sum0 = TRUE), difficulty = -betapar, se = se.beta; itemfit MSQ",
                     packageVersion("eRm"), getRversion()), con)
  write.csv(res, con, row.names = FALSE, quote = FALSE)
  close(con)
}
