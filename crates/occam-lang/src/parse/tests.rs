use super::*;
use crate::ast::{BinOp, ExprKind};

fn ok(src: &str) -> File {
    let (f, d) = parse(src);
    assert!(d.is_empty(), "{d:?}");
    f
}

#[test]
fn parses_plates() {
    let f = ok("plate K = 20, T = 3\nplates N, D from data x\n");
    let Stmt::Plates(p) = &f.statements[1] else {
        panic!()
    };
    assert_eq!(p.items.len(), 2);
    assert_eq!(p.from_data.as_ref().unwrap().name, "x");
    let Stmt::Plates(p) = &f.statements[0] else {
        panic!()
    };
    assert_eq!(p.items[1].name.name, "T");
}

#[test]
fn parses_over_in_both_places_and_map() {
    let f = ok("pi ~ Dirichlet(1) over K map\nW[D] over Q ~ GaussianARD(0, alpha)\n");
    let Stmt::Var(v) = &f.statements[0] else {
        panic!()
    };
    assert_eq!(v.over.as_ref().unwrap().name, "K");
    assert!(v.map.is_some());
    let Stmt::Var(v) = &f.statements[1] else {
        panic!()
    };
    assert_eq!(v.over.as_ref().unwrap().name, "Q");
    assert_eq!(v.plates[0].name, "D");
}

#[test]
fn precedence_mul_over_add() {
    let f = ok("f[N] = a * b + c @ d\n");
    let Stmt::Var(v) = &f.statements[0] else {
        panic!()
    };
    let VarRhs::Deterministic(e) = &v.rhs else {
        panic!()
    };
    let ExprKind::Binary { op, lhs, rhs } = &e.kind else {
        panic!()
    };
    assert_eq!(*op, BinOp::Add);
    assert!(matches!(lhs.kind, ExprKind::Binary { op: BinOp::Mul, .. }));
    assert!(matches!(
        rhs.kind,
        ExprKind::Binary {
            op: BinOp::MatMul,
            ..
        }
    ));
}

#[test]
fn parses_q_blocks_and_keeps_q_a_name() {
    let f = ok("q joint(a, b,\n  c)\nq ~ Gamma(1, 1)\nq2[N] = q\n");
    let Stmt::Q(b) = &f.statements[0] else {
        panic!()
    };
    let names: Vec<&str> = b.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(matches!(&f.statements[1], Stmt::Var(v) if v.name.name == "q"));
    let (_, d) = parse("q joint()\nq mean_field(a)\n");
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0].message, "a q-block without members");
    assert_eq!(d[1].message, "unknown q structure `mean_field`");
}

#[test]
fn recovers_after_an_error() {
    let (f, d) = parse("mu ~ Gaussian(0, \nx ~ \ntau ~ Gamma(1, 1)\n");
    // The open `(` would swallow the newlines, but the next lines start
    // declarations: each broken line is reported and `tau` parses.
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(f.statements.len(), 1);
    let (f, d) = parse("mu ~ \ntau ~ Gamma(1, 1)\nx = )\n");
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(f.statements.len(), 1);
}
