// SPDX-License-Identifier: GPL-2.0

//! The rxe user ABI of the target kernel's headers (`include/uapi/rdma/rdma_user_rxe.h`,
//! `ib_user_verbs.h`): the sizes and offsets of the layouts a driver encodes by hand, as
//! constants. The driver checks its own encodings against them at build time (`queue.rs`), so a
//! kernel whose headers differ fails the build. The command responses are checked here.

use crate::bindings;
use core::mem::{
    offset_of,
    size_of, //
};

const _: () = {
    // Responses of the create/resize commands librxe reads.
    assert!(size_of::<bindings::mminfo>() == 16);
    assert!(size_of::<bindings::rxe_create_cq_resp>() == 16);
    assert!(size_of::<bindings::rxe_resize_cq_resp>() == 16);
    assert!(size_of::<bindings::rxe_create_qp_resp>() == 32);
    assert!(offset_of!(bindings::rxe_create_qp_resp, rq_mi) == 0);
    assert!(offset_of!(bindings::rxe_create_qp_resp, sq_mi) == 16);
    assert!(size_of::<bindings::rxe_create_srq_resp>() == 24);
    assert!(offset_of!(bindings::rxe_create_srq_resp, srq_num) == 16);
    assert!(size_of::<bindings::rxe_modify_srq_cmd>() == 8);
    assert!(size_of::<bindings::rxe_create_ah_resp>() == 8);
    assert!(offset_of!(bindings::ib_uverbs_wc, wc_flags) == 36);
    assert!(offset_of!(bindings::ib_uverbs_wc, port_num) == 46);
};

/// `struct rxe_queue_buf`: where `log2_elem_size` is.
pub(crate) const QUEUE_LOG2_ELEM_SIZE: usize = offset_of!(bindings::rxe_queue_buf, log2_elem_size);
/// `struct rxe_queue_buf`: where `index_mask` is.
pub(crate) const QUEUE_INDEX_MASK: usize = offset_of!(bindings::rxe_queue_buf, index_mask);
/// `struct rxe_queue_buf`: where `producer_index` is.
pub(crate) const QUEUE_PRODUCER: usize = offset_of!(bindings::rxe_queue_buf, producer_index);
/// `struct rxe_queue_buf`: where `consumer_index` is.
pub(crate) const QUEUE_CONSUMER: usize = offset_of!(bindings::rxe_queue_buf, consumer_index);
/// `struct rxe_queue_buf`: where the slots start.
pub(crate) const QUEUE_DATA: usize = offset_of!(bindings::rxe_queue_buf, data);

/// `struct rxe_send_wqe` without its SGEs.
pub(crate) const SEND_WQE_SIZE: usize = size_of::<bindings::rxe_send_wqe>();
/// `struct rxe_send_wqe`: where `iova` is.
pub(crate) const SEND_WQE_IOVA: usize = offset_of!(bindings::rxe_send_wqe, iova);
/// `struct rxe_send_wqe`: where `dma.length` is.
pub(crate) const SEND_WQE_DMA_LENGTH: usize =
    offset_of!(bindings::rxe_send_wqe, dma) + offset_of!(bindings::rxe_dma_info, length);
/// `struct rxe_send_wqe`: where `dma.num_sge` is.
pub(crate) const SEND_WQE_DMA_NUM_SGE: usize =
    offset_of!(bindings::rxe_send_wqe, dma) + offset_of!(bindings::rxe_dma_info, num_sge);
/// `struct rxe_send_wr`: where `opcode` is.
pub(crate) const SEND_WR_OPCODE: usize = offset_of!(bindings::rxe_send_wr, opcode);
/// `struct rxe_send_wr`: where `send_flags` is.
pub(crate) const SEND_WR_SEND_FLAGS: usize = offset_of!(bindings::rxe_send_wr, send_flags);
/// `struct rxe_recv_wqe` without its SGEs.
pub(crate) const RECV_WQE_SIZE: usize = size_of::<bindings::rxe_recv_wqe>();
/// `struct rxe_recv_wqe`: where `dma.num_sge` is.
pub(crate) const RECV_WQE_DMA_NUM_SGE: usize =
    offset_of!(bindings::rxe_recv_wqe, dma) + offset_of!(bindings::rxe_dma_info, num_sge);
/// `struct rxe_sge`.
pub(crate) const SGE_SIZE: usize = size_of::<bindings::rxe_sge>();
/// `struct ib_uverbs_wc`, a CQE.
pub(crate) const CQE_SIZE: usize = size_of::<bindings::ib_uverbs_wc>();
