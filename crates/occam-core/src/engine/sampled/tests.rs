//! Tests of the importance-sampled block.
