//! Packets and messages live in slabs and travel as `u32` handles; queues are intrusive
//! FIFOs threaded through the packets, so moving a packet never allocates.

/// The null handle.
pub const NIL: u32 = u32::MAX;

/// One packet in flight. Fields are those the per-hop path reads, in one cache line
/// (the message keeps the rest, such as its generation time).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Packet {
    /// Next packet in whatever FIFO holds this one.
    pub next: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes of its frame: the payload and the header (`[nic] header`), which buffers and
    /// credits hold and links serialise (with the framing, which takes link time only).
    pub size: u32,
    /// Queue pair of the flow within (src, dst).
    pub qp: u32,
    pub message: u32,
    pub group: u16,
    pub vc: u8,
    /// Output VC chosen at the current switch.
    pub out_vc: u8,
    /// Output port chosen at the current switch.
    pub out_port: u16,
    pub hops: u16,
    /// Intermediate switch still to visit (Valiant, UGAL), or `NIL`.
    pub via: u32,
    /// What the packet is: data (plain, or marked by a switch) or a control packet
    /// (`PacketKind::DATA` on plain data).
    pub kind: PacketKind,
    /// The queue it travels in on its current link, which it joins at the far end: its
    /// VC's, or with congestion isolation the congested-flow class of its VC.
    pub class: u8,
    /// Congestion isolation's notes on the packet (`switch::ioq` isolation bits).
    pub isolation: u8,
    /// Time the first bit left the source NIC.
    pub injected: u64,
    /// Time the tail reaches the buffer currently holding the packet.
    pub tail_at: u64,
    /// Earliest time the current output may start sending it (cut-through bound).
    pub ready_at: u64,
}

/// What a packet is (`Packet::kind`), as a set of bits in one byte: data, which a switch
/// may mark (ECN's congestion experienced, InfiniBand's FECN), or a control packet that
/// travels from a receiver back to a sender (a notification: DCQCN's CNP, IB CC's BECN;
/// an acknowledgement: ACK, NACK, or an ACK that echoes the mark of the data it
/// acknowledges; an in-order receiver's NAK of a sequence error). Control packets are
/// never marked; plain data is 0, which the per-packet path tests in one comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct PacketKind(u8);

impl PacketKind {
    /// Data no switch marked.
    pub const DATA: PacketKind = PacketKind(0);
    /// Data a switch marked ECN congestion experienced (RED).
    pub const ECN_MARKED: PacketKind = PacketKind(1);
    /// Data a switch marked with InfiniBand's forward explicit congestion notification.
    pub const FECN: PacketKind = PacketKind(2);
    /// A congestion notification packet (DCQCN's, RoCE's), back to the sender.
    pub const CNP: PacketKind = PacketKind(4);
    /// A backward explicit congestion notification (InfiniBand CC's), back to the sender.
    pub const BECN: PacketKind = PacketKind(8);
    /// An acknowledgement of a data packet, back to its sender.
    pub const ACK: PacketKind = PacketKind(16);
    /// A negative acknowledgement (a data packet missing or refused), back to its sender.
    pub const NACK: PacketKind = PacketKind(32);
    /// An acknowledgement of a data packet a switch marked, echoing the mark back to its
    /// sender (the per-pair congestion control's notification).
    pub const ACK_MARKED: PacketKind = PacketKind(64);
    /// An in-order receiver's NAK of a sequence error: a packet beyond the one it expects
    /// arrived, and the sender is to go back to the expected one (go-back-N). A matter of
    /// the NICs' transport, not of the congestion control, which never hears of it.
    pub const SEQUENCE_NAK: PacketKind = PacketKind(128);

    const MARKS: u8 = 1 | 2;
    const NOTIFICATIONS: u8 = 4 | 8;
    const ACKNOWLEDGEMENTS: u8 = 16 | 32 | 64;
    const CONTROL: u8 = Self::NOTIFICATIONS | Self::ACKNOWLEDGEMENTS | 128;

    /// Data that no switch marked.
    #[inline(always)]
    pub fn is_plain_data(self) -> bool {
        self.0 == 0
    }

    /// Data (marked or not), not control.
    #[inline(always)]
    pub fn is_data(self) -> bool {
        self.0 & Self::CONTROL == 0
    }

    /// Data a switch marked (ECN or FECN).
    #[inline(always)]
    pub fn is_marked(self) -> bool {
        self.0 & Self::MARKS != 0
    }

    /// A control packet: a notification or an acknowledgement.
    #[inline(always)]
    pub fn is_control(self) -> bool {
        !self.is_data()
    }

    /// A congestion notification back to the sender: a CNP or a BECN.
    #[inline(always)]
    pub fn is_notification(self) -> bool {
        self.0 & Self::NOTIFICATIONS != 0
    }

    /// An acknowledgement: an ACK (echoing a mark or not) or a NACK.
    #[inline(always)]
    pub fn is_acknowledgement(self) -> bool {
        self.0 & Self::ACKNOWLEDGEMENTS != 0
    }

    /// An in-order receiver's NAK of a sequence error.
    #[inline(always)]
    pub fn is_sequence_nak(self) -> bool {
        self == Self::SEQUENCE_NAK
    }

    /// A control packet that tells its sender of congestion, and is counted as a
    /// congestion notification: a notification (CNP, BECN) or an ACK echoing a mark.
    #[inline(always)]
    pub fn notifies_congestion(self) -> bool {
        self.0 & (Self::NOTIFICATIONS | Self::ACK_MARKED.0) != 0
    }

    /// This kind with `mark` (`ECN_MARKED` or `FECN`) added.
    #[inline(always)]
    pub fn marked(self, mark: PacketKind) -> PacketKind {
        debug_assert!(mark.0 & !Self::MARKS == 0, "{mark:?} is not a mark");
        PacketKind(self.0 | mark.0)
    }
}

/// A pool of packets with a free list; handles stay valid until freed.
#[derive(Default)]
pub struct PacketSlab {
    packets: Vec<Packet>,
    free: u32,
    live: u32,
    /// Bytes of every data packet's size that are header, not payload (`[nic] header`).
    header: u32,
}

impl PacketSlab {
    pub fn alloc(&mut self, packet: Packet) -> u32 {
        self.live += 1;
        if self.free != NIL && !self.packets.is_empty() {
            let id = self.free;
            self.free = self.packets[id as usize].next;
            self.packets[id as usize] = packet;
            id
        } else {
            let capacity = self.packets.capacity();
            self.packets.push(packet);
            if self.packets.capacity() != capacity {
                crate::memory::huge_pages::advise(&self.packets);
            }
            (self.packets.len() - 1) as u32
        }
    }

    /// Prefetches packet `id`'s line (`memory::prefetch`).
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        crate::memory::prefetch::prefetch_at(&self.packets, id as usize);
    }

    /// Prefetches the line of packet `id` if it is one (`NIL`: none).
    #[inline(always)]
    pub fn prefetch_if_any(&self, id: u32) {
        if id != NIL {
            self.prefetch(id);
        }
    }

    pub fn release(&mut self, id: u32) {
        self.live -= 1;
        self.packets[id as usize].next = self.free;
        self.free = id;
    }

    pub fn live(&self) -> u32 {
        self.live
    }

    pub fn capacity(&self) -> usize {
        self.packets.len()
    }

    pub fn new() -> PacketSlab {
        PacketSlab::with_header(0)
    }

    /// A pool of packets whose frames carry `header` bytes besides their payload.
    pub fn with_header(header: u32) -> PacketSlab {
        PacketSlab { packets: Vec::new(), free: NIL, live: 0, header }
    }

    /// The payload of data packet `id`: its frame less the header.
    #[inline]
    pub fn payload(&self, id: u32) -> u64 {
        (self.packets[id as usize].size - self.header) as u64
    }
}

impl std::ops::Index<u32> for PacketSlab {
    type Output = Packet;
    #[inline]
    fn index(&self, id: u32) -> &Packet {
        &self.packets[id as usize]
    }
}

impl std::ops::IndexMut<u32> for PacketSlab {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.packets[id as usize]
    }
}

/// An intrusive FIFO of packets, with its byte count: 16 bytes, so that the queues of a
/// switch port share few cache lines.
#[derive(Clone, Copy, Debug)]
pub struct Fifo {
    pub head: u32,
    pub tail: u32,
    pub bytes: u64,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo { head: NIL, tail: NIL, bytes: 0 }
    }
}

impl Fifo {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Whether the FIFO holds exactly one packet.
    #[inline]
    pub fn is_single(&self) -> bool {
        self.head != NIL && self.head == self.tail
    }

    /// Number of packets (walks the list: for reports, not the per-packet path).
    pub fn count(&self, slab: &PacketSlab) -> u32 {
        let (mut n, mut at) = (0, self.head);
        while at != NIL {
            n += 1;
            at = slab[at].next;
        }
        n
    }

    #[inline]
    pub fn push(&mut self, slab: &mut PacketSlab, id: u32) {
        slab[id].next = NIL;
        if self.tail == NIL {
            self.head = id;
        } else {
            slab[self.tail].next = id;
        }
        self.tail = id;
        self.bytes += slab[id].size as u64;
    }

    #[inline]
    pub fn pop(&mut self, slab: &PacketSlab) -> u32 {
        let id = self.head;
        debug_assert!(id != NIL, "pop from an empty FIFO");
        self.head = slab[id].next;
        if self.head == NIL {
            self.tail = NIL;
        }
        self.bytes -= slab[id].size as u64;
        id
    }
}

/// What a workload attaches to a message, handed back to it when the message is done:
/// the job it belongs to and the step within that job. Open-loop traffic uses
/// `Tag::default()` (job 0, step 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tag {
    pub job: u16,
    pub step: u16,
}

/// A message: generated as a whole, segmented into packets by its NIC.
#[derive(Clone, Copy, Debug, Default)]
pub struct Message {
    /// The host that posted it.
    pub src: u32,
    pub dst: u32,
    /// The workload's label, returned with its completion.
    pub tag: Tag,
    pub qp: u32,
    pub created: u64,
    /// Total size in bytes.
    pub size: u64,
    /// Bytes not yet segmented into packets.
    pub unsent: u64,
    /// Packets created but not yet delivered, plus one while bytes remain unsent. (With an
    /// in-order receiver: packets sent at least once and not yet accepted; a packet sent
    /// again after a NAK is not counted twice.)
    pub outstanding: u32,
    pub vc: u8,
    /// The source stream it was posted to (a mix's part; 0 otherwise).
    pub stream: u8,
    pub next_free: u32,
    /// With an in-order receiver: the next message of its flow the sender keeps for going
    /// back (sent, not yet all accepted), or `NIL`.
    pub next_in_flow: u32,
}

/// Pool of messages, bounded in practice by the source queues.
#[derive(Default)]
pub struct MessageSlab {
    messages: Vec<Message>,
    free: u32,
}

impl MessageSlab {
    pub fn new() -> MessageSlab {
        MessageSlab { messages: Vec::new(), free: NIL }
    }

    /// Prefetches the line of message `id` (`memory::prefetch`).
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        crate::memory::prefetch::prefetch_at(&self.messages, id as usize);
    }

    pub fn alloc(&mut self, message: Message) -> u32 {
        if self.free != NIL {
            let id = self.free;
            self.free = self.messages[id as usize].next_free;
            self.messages[id as usize] = message;
            id
        } else {
            self.messages.push(message);
            (self.messages.len() - 1) as u32
        }
    }

    pub fn release(&mut self, id: u32) {
        self.messages[id as usize].next_free = self.free;
        self.free = id;
    }

    /// Messages allocated and not yet released: queued, in flight, or arriving. Walks
    /// the free list, for the checks at the end of a run: no count is kept per message.
    pub fn live(&self) -> usize {
        let (mut free, mut at) = (0, self.free);
        while at != NIL {
            free += 1;
            at = self.messages[at as usize].next_free;
        }
        self.messages.len() - free
    }
}

impl std::ops::Index<u32> for MessageSlab {
    type Output = Message;
    #[inline]
    fn index(&self, id: u32) -> &Message {
        &self.messages[id as usize]
    }
}

impl std::ops::IndexMut<u32> for MessageSlab {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Message {
        &mut self.messages[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_messages_are_those_not_released() {
        let mut slab = MessageSlab::new();
        let ids: Vec<u32> = (0..4).map(|_| slab.alloc(Message::default())).collect();
        slab.release(ids[1]);
        slab.release(ids[3]);
        assert_eq!(slab.live(), 2);
        slab.alloc(Message::default());
        assert_eq!(slab.live(), 3, "a released slot is reused");
    }

    #[test]
    fn kinds_say_what_a_packet_is() {
        let k = PacketKind::DATA;
        assert!(k.is_plain_data() && k.is_data() && !k.is_marked() && !k.is_control());
        for mark in [PacketKind::ECN_MARKED, PacketKind::FECN] {
            let m = k.marked(mark);
            assert!(m.is_data() && m.is_marked() && !m.is_plain_data() && !m.is_control());
        }
        for n in [PacketKind::CNP, PacketKind::BECN] {
            assert!(n.is_control() && n.is_notification() && !n.is_acknowledgement() && !n.is_marked());
        }
        for a in [PacketKind::ACK, PacketKind::NACK, PacketKind::ACK_MARKED] {
            assert!(a.is_control() && a.is_acknowledgement() && !a.is_notification() && !a.is_data());
        }
        let notifying = |k: PacketKind| k.notifies_congestion();
        assert!(notifying(PacketKind::CNP) && notifying(PacketKind::BECN) && notifying(PacketKind::ACK_MARKED));
        assert!(!notifying(PacketKind::ACK) && !notifying(PacketKind::NACK) && !notifying(PacketKind::ECN_MARKED));
        let nak = PacketKind::SEQUENCE_NAK;
        assert!(nak.is_control() && nak.is_sequence_nak() && !nak.is_data() && !nak.is_plain_data());
        assert!(!nak.is_acknowledgement() && !nak.is_notification() && !nak.notifies_congestion() && !nak.is_marked());
        assert!(!PacketKind::NACK.is_sequence_nak() && !PacketKind::DATA.is_sequence_nak());
        assert_eq!(std::mem::size_of::<PacketKind>(), 1);
    }

    #[test]
    fn fifo_keeps_order_and_bytes() {
        let mut slab = PacketSlab::new();
        let mut q = Fifo::default();
        let ids: Vec<u32> = (0..5).map(|i| slab.alloc(Packet { size: 10 + i, ..Default::default() })).collect();
        for &id in &ids {
            q.push(&mut slab, id);
        }
        assert_eq!(q.bytes, 10 + 11 + 12 + 13 + 14);
        assert_eq!(q.count(&slab), 5);
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(q.is_single(), k == 4);
            assert_eq!(q.pop(&slab), id);
        }
        assert!(q.is_empty());
        assert_eq!(q.bytes, 0);
    }

    #[test]
    fn fifos_stay_small() {
        assert_eq!(std::mem::size_of::<Fifo>(), 16);
    }

    #[test]
    fn packet_fills_one_cache_line() {
        // A field more and every packet spans two lines, which the per-hop path touches.
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        assert_eq!(std::mem::align_of::<Packet>(), 64);
    }

    #[test]
    fn messages_stay_small() {
        // The go-back-N link fits in what was padding.
        assert_eq!(std::mem::size_of::<Message>(), 56);
    }

    #[test]
    fn slab_reuses_freed_slots() {
        let mut slab = PacketSlab::new();
        let a = slab.alloc(Packet::default());
        let _b = slab.alloc(Packet::default());
        slab.release(a);
        assert_eq!(slab.alloc(Packet::default()), a);
        assert_eq!(slab.capacity(), 2);
        assert_eq!(slab.live(), 2);
    }
}
