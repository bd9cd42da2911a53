# Reference values for pkg/measure's polytomous person fit (TestPersonFitMatchesERmPCM), from an
# independent implementation: R's eRm (Debian: apt-get install r-base-core r-cran-erm).
#
# Regenerate from pkg/measure/testdata/erm:
#   Rscript personfit_pcm.R
# It writes personfit_pcm.csv: for each case (a simulated data set), each item's thresholds
# (eRm's thresholds(PCM(x))$threshtable: the θ at which categories k − 1 and k are equally
# likely, in logits) and, for every person eRm gives a fit (neither zero nor perfect), the
# response pattern (one digit per item), eRm's own ability (thetapar) and eRm's personfit
# figures. The data are simulated here with fixed seeds, so a rerun reproduces the file.
#
# The test feeds eRm's thetapar and these thresholds, as step difficulties, into
# Framework.PersonFit with s = 1 and m = 0.5 (λ = 0: the step difficulty is the threshold), so both
# sides evaluate the same formulas at the same point and must agree to 1e-6.
#
# No response is missing: eRm 1.0-2 groups a missing-data pattern's categories by the first
# items' category counts (METHOD §13), which is wrong when items differ in their number of
# categories, as they do here. Every category of every item is observed (PCM() needs that).
suppressPackageStartupMessages(library(eRm))

# thresholds: a list of each item's step difficulties (logits; one step: dichotomous).
simulate <- function(seed, persons, thresholds, misfit = 0) {
  set.seed(seed)
  k <- length(thresholds)
  theta <- rnorm(persons)
  x <- matrix(0L, persons, k)
  for (i in seq_len(k)) {
    d <- thresholds[[i]]
    for (p in seq_len(persons)) {
      logits <- c(0, cumsum(theta[p] - d))
      pr <- exp(logits - max(logits))
      # Some persons answer at random (uniform over the categories): misfit to flag.
      if (p <= misfit * persons) pr <- rep(1, length(pr))
      x[p, i] <- sample(seq_along(pr) - 1L, 1, prob = pr)
    }
  }
  colnames(x) <- sprintf("I%02d", seq_len(k))
  rownames(x) <- sprintf("P%03d", seq_len(persons))
  x
}

mixed <- list(c(-1.2, 0.4), c(-0.5), c(-1.5, -0.2, 1.1), c(0.3), c(-0.8, 0.9), c(1.0),
              c(-1.0, 0.0, 0.7), c(-0.2, 0.6), c(-1.6), c(0.2, -0.4, 1.4), c(0.8, 1.5), c(-0.9))
cases <- list(
  mixed      = simulate(31, 300, mixed),
  pcm        = simulate(32, 300, lapply(seq(-1.5, 1.5, length.out = 10), function(c) c + c(-0.9, 0, 0.9))),
  disordered = simulate(33, 400, list(c(0.8, -0.6), c(1.2, -1.0, 0.4), c(-0.3, 0.3), c(0.5, -0.5, 0.0, 0.9),
                                      c(-1.1), c(0.6), c(0.2, -0.2), c(-0.7, 0.7)), misfit = 0.1)
)

con <- file("personfit_pcm.csv", "w")
writeLines(sprintf("# eRm %s, R %s: PCM + person.parameter + personfit; steps = thresholds(PCM)$threshtable; theta = thetapar",
                   packageVersion("eRm"), getRversion()), con)
writeLines("# rows: case,item,ID,steps(;-separated) | case,person,ID,theta,responses(score digit per item),infit,outfit,infitZ,outfitZ", con)
writeLines("case,kind,id,value,responses,infit,outfit,infit_z,outfit_z", con)
f <- function(v) sprintf("%.12f", v)
for (name in names(cases)) {
  x <- cases[[name]]
  m <- PCM(x)
  th <- thresholds(m)$threshtable[[1]]
  pp <- person.parameter(m)
  pf <- personfit(pp)
  for (i in seq_len(ncol(x))) {
    steps <- th[i, -1]
    steps <- steps[!is.na(steps)]
    writeLines(paste(name, "item", colnames(x)[i], paste(f(steps), collapse = ";"), "", "", "", "", "", sep = ","), con)
  }
  theta <- pp$theta.table[, "Person Parameter"]
  names(theta) <- rownames(pp$theta.table)
  for (p in names(pf$p.infitMSQ)) {
    pattern <- paste(x[p, ], collapse = "")
    writeLines(paste(name, "person", p, f(theta[p]), pattern, f(pf$p.infitMSQ[p]), f(pf$p.outfitMSQ[p]),
                     f(pf$p.infitZ[p]), f(pf$p.outfitZ[p]), sep = ","), con)
  }
  cat(sprintf("%s: %d persons with fit, %d items, categories %s\n", name, length(pf$p.infitMSQ), ncol(x),
              paste(apply(x, 2, max), collapse = " ")))
}
close(con)
