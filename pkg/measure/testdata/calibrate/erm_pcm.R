# Reference values for pkg/measure's partial credit and rating scale calibration
# (TestCalibratePolytomousMatchesERm), from an independent implementation: R's eRm 1.0-2
# (Debian: apt-get install r-base-core r-cran-erm).
#
# Regenerate from pkg/measure/testdata/calibrate:
#   Rscript erm_pcm.R [NAME[:MODEL] …]     (no names: every set and model)
# For each data set NAME it writes NAME.csv (the response matrix in yardstick-calibrate's input
# format: person,<item id>,…; cells 0 … m, blanks for items not administered) and, for each model
# fitted (pcm, rsm), NAME.MODEL.erm.csv (eRm's thresholds, with their standard errors and each
# item's fit). The data are simulated here with fixed seeds, so a rerun reproduces every file.
#
# eRm 1.0-2 has two traps for a reference (METHOD §13); this script avoids both by replacing eRm's
# internal fitcml with a copy that differs in exactly two places (see patched_fitcml below):
#  1. nlm's default gradtol (1e-6, scaled) stops the optimiser up to ~1e-4 logits from the root;
#     the copy passes gradtol = 1e-10 to nlm.
#  2. With missing responses fitcml splits each missing-data pattern's category parameters into
#     items by mt_ind[1:n] (the first n entries of the item index), which is right only when the
#     items present have the same category counts as the first items of the file; with items of
#     different category counts (pcm_mixed) it multiplies the wrong polynomials and is logits off.
#     The copy indexes mt_ind[NAvec == 1], the items that pattern actually holds.
# Sets whose items all have the same number of categories (rating4, rating5) are not affected by
# (2); check_bug_free below fits them with the original fitcml too and stops if they differ.
#
# Columns of NAME.MODEL.erm.csv, one row per step:
#   item, step (1 … m_i), threshold = thresholds(fit)$threshpar (the θ at which categories k−1 and
#   k are equally likely, in eRm's own normalisation: sum0 = TRUE, Σ betapar = 0), se =
#   se.thresh (the covariance W H⁻¹ Wᵀ of betapar carried to the thresholds), infit, outfit =
#   itemfit(person.parameter(fit)) mean squares of the step's item (persons with zero or perfect
#   scores excluded).
suppressPackageStartupMessages(library(eRm))

patch <- function(f, from, to) {
  src <- deparse(f)
  hit <- grepl(from, src, fixed = TRUE)
  if (sum(hit) != 1) stop(sprintf("patch: %d lines of fitcml contain %s; want 1", sum(hit), from))
  src[hit] <- sub(from, to, src[hit], fixed = TRUE)
  g <- eval(parse(text = src))
  environment(g) <- environment(f)
  g
}
original_fitcml <- eRm:::fitcml
patched_fitcml <- patch(patch(original_fitcml,
  "mt_ind[1:(length(beta.vec[NAvec == 1]))]", "mt_ind[NAvec == 1]"),
  "iterlim = 5000L)", "iterlim = 5000L, gradtol = 1e-10)")
use_fitcml <- function(f) assignInNamespace("fitcml", f, "eRm")

# PCM responses: theta ~ N(mean, sd²); thresholds[[i]] the step logits of item i.
simulate <- function(seed, persons, thresholds, design, extra_blank = 0, theta_mean = 0, theta_sd = 1) {
  set.seed(seed)
  k <- length(thresholds)
  theta <- rnorm(persons, theta_mean, theta_sd)
  x <- matrix(0L, persons, k)
  for (i in seq_len(k)) {
    cum <- outer(theta, seq_along(thresholds[[i]])) - matrix(cumsum(thresholds[[i]]), persons, length(thresholds[[i]]), byrow = TRUE)
    p <- exp(cbind(0, cum))
    p <- p / rowSums(p)
    u <- runif(persons)
    x[, i] <- rowSums(u > t(apply(p, 1, cumsum))[, -ncol(p), drop = FALSE])
  }
  x[!design(persons, k)] <- NA
  if (extra_blank > 0) x[matrix(runif(persons * k) < extra_blank, persons, k)] <- NA
  colnames(x) <- sprintf("I%02d", seq_len(k))
  for (i in seq_len(k)) {
    seen <- sort(unique(na.omit(x[, i])))
    if (!identical(as.integer(seen), 0:length(thresholds[[i]]))) stop(sprintf("item %d: categories %s", i, paste(seen, collapse = " ")))
  }
  if (any(rowSums(!is.na(x)) < 2)) stop("a person with fewer than 2 responses")
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

set.seed(20)
mixed_steps <- lapply(1:20, function(i) {
  m <- c(2, 3, 4)[(i - 1) %% 3 + 1]
  loc <- -1.6 + 3.2 * (i - 1) / 19
  loc + seq(-1, 1, length.out = m) * (0.3 + 0.3 * m) + rnorm(m, 0, 0.2)
})
mixed_steps[[5]] <- rev(mixed_steps[[5]]) # disordered steps are legal
rating_steps <- function(locs, tau) lapply(locs, function(l) l + tau)
set.seed(22)
binary_steps <- lapply(1:15, function(i) {
  m <- c(1, 2, 4)[(i - 1) %% 3 + 1]
  loc <- -1.4 + 2.8 * (i - 1) / 14
  loc + seq(-1, 1, length.out = m) * (0.3 + 0.3 * m) * (m > 1) + rnorm(m, 0, 0.2)
})
set.seed(21)
wide_steps <- lapply(seq(-1.5, 1.5, length.out = 30), function(l) l + c(-1.4, -0.5, 0.4, 1.5) + rnorm(4, 0, 0.25))

# Each set simulated on demand (a rerun of one set does not simulate the others).
sets <- list(
  # 20 items of 3, 4 and 5 categories in 4 overlapping booklets of 10, plus 1% random blanks.
  pcm_mixed = list(x = function() simulate(31, 1200, mixed_steps, cyclic_booklets(4), extra_blank = 0.01), models = "pcm"),
  # 15 items of 2, 3 and 5 categories (0/1 items among partial credit ones) in 3 overlapping
  # booklets of 10: the one-step items' SEs under eRm's constraint.
  pcm_binary = list(x = function() simulate(34, 1500, binary_steps, cyclic_booklets(3)), models = "pcm"),
  # 12 rating-scale items of 4 categories (the steps disordered), 30% of the cells blank at random.
  rating4 = list(x = function() simulate(32, 300, rating_steps(seq(-1.2, 1.3, length.out = 12), c(-0.4, -0.7, 1.1)), mcar(0.3),
                                         theta_sd = 1.2), models = c("pcm", "rsm")),
  # 30 items of 5 categories in 3 overlapping booklets of 20, 3,000 persons.
  rating5 = list(x = function() simulate(33, 3000, wide_steps, cyclic_booklets(3), theta_mean = 0.3, theta_sd = 1.3),
                 models = c("pcm", "rsm"))
)

fitted <- function(x, model) if (model == "pcm") PCM(x, sum0 = TRUE) else RSM(x, sum0 = TRUE)

check_bug_free <- function(name, x, model, fit) {
  use_fitcml(original_fitcml)
  on.exit(use_fitcml(patched_fitcml))
  orig <- fitted(x, model)
  d <- max(abs(orig$betapar - fit$betapar))
  cat(sprintf("  %s %s: the original fitcml is %.2g logits from the patched one (default gradtol)\n", name, model, d))
  if (d > 1e-3) stop("the grouping bug touches a set whose items all have the same number of categories")
}

use_fitcml(patched_fitcml)
only <- commandArgs(trailingOnly = TRUE)
if (length(only) == 0) only <- names(sets)
for (name in unique(sub(":.*", "", only))) {
  x <- sets[[name]]$x()
  cat(sprintf("%s: %d persons x %d items, %.1f%% blank, categories %s\n", name, nrow(x), ncol(x), 100 * mean(is.na(x)),
              paste(apply(x, 2, max, na.rm = TRUE) + 1, collapse = " ")))
  out <- data.frame(person = sprintf("P%04d", seq_len(nrow(x))), x, check.names = FALSE)
  write.csv(out, paste0(name, ".csv"), row.names = FALSE, quote = FALSE, na = "")
  asked <- sub(".*:", "", only[startsWith(only, paste0(name, ":"))])
  for (model in if (length(asked) > 0) asked else sets[[name]]$models) {
    started <- Sys.time()
    fit <- fitted(x, model)
    cat(sprintf("  %s: nlm code %d after %d iterations, log L %.8f (%.0f s)\n", model, fit$convergence, fit$iter, fit$loglik,
                as.numeric(Sys.time() - started, units = "secs")))
    if (length(unique(apply(x, 2, max, na.rm = TRUE))) == 1) check_bug_free(name, x, model, fit)
    th <- thresholds(fit)
    ifit <- itemfit(person.parameter(fit))
    m <- apply(x, 2, max, na.rm = TRUE)
    item <- rep(colnames(x), m)
    res <- data.frame(item = item, step = sequence(m), threshold = sprintf("%.10f", th$threshpar),
                      se = sprintf("%.10f", th$se.thresh),
                      infit = sprintf("%.10f", ifit$i.infitMSQ[item]), outfit = sprintf("%.10f", ifit$i.outfitMSQ[item]))
    con <- file(sprintf("%s.%s.erm.csv", name, model), "w")
    writeLines(sprintf("# eRm %s, R %s: %s(sum0 = TRUE), fitcml patched (erm_pcm.R); log L %.10f; thresholds(), se.thresh, itemfit MSQ",
                       packageVersion("eRm"), getRversion(), toupper(model), fit$loglik), con)
    write.csv(res, con, row.names = FALSE, quote = FALSE)
    close(con)
  }
}
