//! Adding a node: the checks every node passes when it is added — parent slots, conjugacy
//! (Winn Table 2.1), moment kinds, plates and their alignment, stacked and selected axes, sizes —
//! so that each error names the node and slot at fault.

use super::*;

impl Graph {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_node(
        &mut self,
        name: &str,
        body: Body,
        kind: MomentKind,
        plates: &[PlateId],
        selectors: &[(NodeId, PlateId)],
        parents: Vec<ParentSpec>,
        inputs: &[SlotInput],
        slot_names: &[String],
        needs_constant: &[bool],
    ) -> Result<NodeId, BuildError> {
        let shape = |what: String| BuildError::Shape {
            node: name.into(),
            what,
        };
        if self.node(name).is_some() {
            return Err(BuildError::Duplicate {
                what: "node",
                name: name.into(),
            });
        }
        if parents.len() != inputs.len() {
            return Err(shape(format!(
                "takes {} parent(s) ({}), got {}",
                inputs.len(),
                slot_names.join(", "),
                parents.len()
            )));
        }
        if inputs.len() > MAX_SLOTS {
            return Err(shape(format!("at most {MAX_SLOTS} parents are supported")));
        }
        for (i, p) in plates.iter().enumerate() {
            if plates[..i].contains(p) {
                return Err(shape(format!(
                    "plate `{}` listed twice",
                    self.plates[p.0].0
                )));
            }
        }
        let axes = self.axes(plates);
        if node_values(&axes, kind.len()).is_none() {
            return Err(self.too_big(name, &axes));
        }
        // Selectors: Categorical index nodes whose plates are within the child's.
        let mut sel = Vec::new();
        let mut ext = axes.clone();
        for &(index, plate) in selectors {
            let inode = &self.nodes[index.0];
            let k = self.plates[plate.0].1;
            if inode.kind != (MomentKind::Categorical { k }) {
                return Err(BuildError::Conjugacy {
                    node: name.into(),
                    slot: format!("index over plate `{}`", self.plates[plate.0].0),
                    parent: inode.name.clone(),
                    expected: MomentKind::Categorical { k },
                    got: inode.kind,
                });
            }
            self.check_plates(name, &inode.name, &inode.axes, &axes, None)?;
            if plates.contains(&plate) || ext.iter().any(|a| a.id == plate.0) {
                return Err(shape(format!(
                    "selector plate `{}` is also one of the node's plates",
                    self.plates[plate.0].0
                )));
            }
            sel.push(Selector {
                node: index.0,
                k,
                rule: IndexRule::strided(&axes, &inode.axes, None),
            });
            ext.push(Axis {
                id: plate.0,
                size: k,
            });
        }
        let widest = inputs.iter().map(|i| i.stack.max(1)).max().unwrap_or(1);
        if node_values(&ext, widest).is_none() {
            return Err(self.too_big(name, &ext));
        }
        // Parent edges.
        let mut edges = Vec::with_capacity(parents.len());
        for (s, (spec, input)) in parents.into_iter().zip(inputs).enumerate() {
            let slot = &slot_names[s];
            let edge = match spec {
                ParentSpec::Const(values) => {
                    let one = input.kind.value_len();
                    let values = if input.stack > 1 && values.len() == one {
                        values.repeat(input.stack)
                    } else {
                        values
                    };
                    if values.len() != one * input.stack {
                        return Err(shape(format!(
                            "constant for slot `{slot}` needs {} value(s), got {}",
                            one * input.stack,
                            values.len()
                        )));
                    }
                    let mut m = Vec::with_capacity(input.len());
                    for chunk in values.chunks(one) {
                        m.extend(input.kind.fixed_moments(chunk).map_err(|why| {
                            BuildError::Value {
                                node: name.into(),
                                element: 0,
                                why: format!("constant for slot `{slot}`: {why}"),
                            }
                        })?);
                    }
                    Edge {
                        source: Source::Const(m),
                        rule: IndexRule::Broadcast,
                        stack: input.stack,
                        plen: input.kind.len(),
                    }
                }
                ParentSpec::Node(pid) | ParentSpec::Stacked(pid, _) => {
                    let explicit = if let ParentSpec::Stacked(_, pl) = spec {
                        Some(pl)
                    } else {
                        None
                    };
                    let parent = &self.nodes[pid.0];
                    if needs_constant[s] {
                        return Err(BuildError::Shape {
                            node: name.into(),
                            what: format!("slot `{slot}` must be a constant here (a random `{}` is not conjugate)", parent.name),
                        });
                    }
                    if parent.kind != input.kind {
                        return Err(BuildError::Conjugacy {
                            node: name.into(),
                            slot: slot.clone(),
                            parent: parent.name.clone(),
                            expected: input.kind,
                            got: parent.kind,
                        });
                    }
                    // A slot that gathers one element (a state plate of size 1, e.g. a 1-D
                    // chain's `dynamics = A[D] over D` with D = 1) reads it along the parent's
                    // one plate of size 1 that the child is not in, as it would along a larger one.
                    let gathers_one = input.stack == 1 && {
                        let mut extra = parent
                            .axes
                            .iter()
                            .filter(|a| !ext.iter().any(|e| e.id == a.id));
                        matches!((extra.next(), extra.next()), (Some(a), None) if a.size == 1)
                    };
                    let stack_axis = if input.stack > 1 || explicit.is_some() || gathers_one {
                        Some(self.stack_axis(name, slot, parent, &ext, input.stack, explicit)?)
                    } else {
                        None
                    };
                    self.check_plates(name, &parent.name, &parent.axes, &ext, stack_axis)?;
                    // A parent without plates read unstacked: the broadcast rule.
                    let rule = if parent.axes.is_empty() && stack_axis.is_none() {
                        IndexRule::Broadcast
                    } else {
                        IndexRule::strided(&ext, &parent.axes, stack_axis)
                    };
                    Edge {
                        source: Source::Node(pid.0),
                        rule,
                        stack: input.stack,
                        plen: input.kind.len(),
                    }
                }
            };
            edges.push(edge);
        }
        let node = ModelNode::new(
            name.into(),
            plates.iter().map(|p| p.0).collect(),
            axes,
            body,
            kind,
            edges,
            sel,
        );
        let id = self.nodes.len();
        for (s, e) in node.parents.iter().enumerate() {
            if let Source::Node(pid) = e.source {
                self.nodes[pid].children.push((id, Role::Slot(s)));
            }
        }
        for (m, sl) in node.selectors.iter().enumerate() {
            self.nodes[sl.node].children.push((id, Role::Selector(m)));
        }
        self.names.insert(name.to_string(), id);
        self.nodes.push(node);
        Ok(NodeId(id))
    }

    /// The error for a node over `axes` beyond [`MAX_NODE_VALUES`], naming the plate sizes.
    fn too_big(&self, name: &str, axes: &[Axis]) -> BuildError {
        let sizes: Vec<String> = axes
            .iter()
            .map(|a| format!("{} = {}", self.plates[a.id].0, a.size))
            .collect();
        BuildError::Shape {
            node: name.into(),
            what: format!(
                "plates {} hold more than the limit of {MAX_NODE_VALUES} values in one node",
                sizes.join(", ")
            ),
        }
    }

    fn stack_axis(
        &self,
        node: &str,
        slot: &str,
        parent: &ModelNode,
        ext: &[Axis],
        stack: usize,
        explicit: Option<PlateId>,
    ) -> Result<Axis, BuildError> {
        let candidates: Vec<Axis> = match explicit {
            Some(pl) => parent
                .axes
                .iter()
                .filter(|a| a.id == pl.0)
                .copied()
                .collect(),
            None => parent
                .axes
                .iter()
                .filter(|a| !ext.iter().any(|e| e.id == a.id))
                .copied()
                .collect(),
        };
        match candidates.as_slice() {
            [a] if a.size == stack => Ok(*a),
            [a] => Err(BuildError::Shape {
                node: node.into(),
                what: format!(
                    "slot `{slot}` gathers {stack} elements, but `{}` has {} along plate `{}`",
                    parent.name, a.size, self.plates[a.id].0
                ),
            }),
            _ => Err(BuildError::Shape {
                node: node.into(),
                what: format!(
                    "slot `{slot}` gathers {stack} elements of `{}` along one plate that `{node}` is not in; \
                     `{}` has {} such plates",
                    parent.name,
                    parent.name,
                    candidates.len()
                ),
            }),
        }
    }

    fn check_plates(
        &self,
        node: &str,
        parent: &str,
        paxes: &[Axis],
        ext: &[Axis],
        stack: Option<Axis>,
    ) -> Result<(), BuildError> {
        for a in paxes {
            if !ext.iter().any(|e| e.id == a.id) && stack.map(|s| s.id) != Some(a.id) {
                let names: Vec<String> = ext
                    .iter()
                    .map(|e| format!("{}={}", self.plates[e.id].0, e.size))
                    .collect();
                return Err(BuildError::PlateMismatch {
                    node: node.into(),
                    parent: parent.into(),
                    plate: format!("{} (size {})", self.plates[a.id].0, a.size),
                    hint: format!("; `{node}` has plates [{}]", names.join(", ")),
                });
            }
        }
        Ok(())
    }
}

pub(super) fn needs_constant(dist: &Dist, slot: usize) -> bool {
    struct Nc(usize);
    impl crate::dist::DistVisitor for Nc {
        type Output = bool;
        fn visit<D: crate::dist::ExpFamily>(self, d: &D) -> bool {
            d.needs_constant_parent(self.0)
        }
    }
    dist.visit(Nc(slot))
}
