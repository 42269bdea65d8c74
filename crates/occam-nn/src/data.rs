//! Data utilities: lag windows, z-scores, PCA preprocessing, fixed splits, NMSE and RMSE.
